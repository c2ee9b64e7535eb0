/**
 * The gateway's response store: what it keeps of the Responses API's responses so that
 * `previous_response_id`, `GET`/`DELETE /responses/{id}` and `…/input_items` work on providers that
 * do not keep responses themselves (the translated ones), and which provider made each response it
 * relayed (OpenAI, Azure keep their own; the gateway sends later calls on that id to the same
 * provider). Entries are keyed by response id and carry the organization whose key made them: a
 * caller reads an entry only when it is its own ({@link ownEntry}).
 * Source of the semantics: OpenAI API reference, "Responses" (`store`, `previous_response_id`,
 * "Get a model response", "Delete a model response", "List input items"; responses are kept 30 days).
 */
import type { ProviderName } from '../../shared/providers.ts';

/** A parsed JSON object. */
export type Json = Record<string, any>;

/** A response the gateway made (a translated provider's answer), with every input item it answered. */
export interface MadeEntry {
  kind: 'made';
  /** The organization whose key made it ('' when the gateway runs without keys). */
  org: string;
  /** The provider that answered, and the model sent to it. */
  provider: string;
  /** The response object as the client received it (`status`, `output`, `usage`, …). */
  response: Json;
  /**
   * The conversation's input items, oldest first: those of the responses it followed
   * (`previous_response_id`, with their output items) and then its own; a string input as one user
   * `message` item.
   */
  input: Json[];
}

/** A response a provider made and keeps (OpenAI, Azure): the gateway remembers which one. */
export interface RelayedEntry {
  kind: 'relayed';
  org: string;
  provider: ProviderName;
}

/** What the store keeps under one response id. */
export type StoredEntry = MadeEntry | RelayedEntry;

/** A result now (the in-memory store) or later (Redis). */
export type MaybePromise<T> = T | Promise<T>;

/** One response store (./memory.ts, ./redis.ts). Built once at start; shared by every request. */
export interface ResponseStore {
  /** `memory` or `redis`, for logs and tests. */
  readonly name: string;
  /**
   * The entry under `id`, or null when there is none (never stored, deleted, expired, evicted).
   * @throws rejects when the store cannot be read (Redis down): the caller answers 503.
   */
  get(id: string): MaybePromise<StoredEntry | null>;
  /**
   * Keeps `entry` under `id` (replacing any), for the store's lifetime (30 days) or until evicted.
   * Never throws: a write that fails or is too large is logged and dropped (a later call on the id
   * then finds nothing, as after an eviction).
   */
  put(id: string, entry: StoredEntry): void;
  /**
   * Removes the entry under `id`; true when there was one.
   * @throws rejects when the store cannot be written.
   */
  delete(id: string): MaybePromise<boolean>;
  /**
   * Resolves once the store can take writes at once (Redis: connected), or once it has waited its
   * timeout for that; never rejects. The proxy listens only after it, so the first response it keeps
   * is written before its client has it, as every later one is.
   */
  whenReady(): Promise<void>;
  /** Stops (closes its connection); pending writes are sent first when they can be. Never rejects. */
  close(): Promise<void>;
}

/** How long an entry is kept: 30 days, as OpenAI keeps stored responses (ms). */
export const ENTRY_TTL_MS = 30 * 24 * 3600 * 1000;
/** The largest entry kept (bytes of its JSON): a longer conversation is not stored (and logged). */
export const MAX_ENTRY_BYTES = 16 * 1024 * 1024;

/** The entry when it belongs to `org`, else null: another organization's response is as good as unknown. */
export function ownEntry(entry: StoredEntry | null, org: string): StoredEntry | null {
  return entry !== null && entry.org === org ? entry : null;
}
