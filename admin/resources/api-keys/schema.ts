/** Request bodies of the `/v1/api-keys` routes (superstruct). */
import { object, size, string } from 'superstruct';

/** Body of `POST /v1/api-keys`: a name of 1–200 characters, no other members. */
export const CreateKeyBody = object({ name: size(string(), 1, 200) });
