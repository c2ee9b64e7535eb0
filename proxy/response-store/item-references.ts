/**
 * `item_reference` input items (`{"type": "item_reference", "id": …}`) that name an output item of a
 * response the gateway made (a translated provider answered it): the Vercel AI SDK sends its
 * assistant's earlier text this way whenever `store` is on (its default), so a conversation with a
 * translated provider goes on only if the gateway puts the item itself back in its place.
 *
 * The gateway's item ids carry their response: `<prefix>_<request id without dashes>_<output index>`
 * for response `resp_<request id without dashes>`
 * (../translators/openai-responses-to-openai-chat/output.ts), so the response store is read once per
 * response named, with no index of its own. A reference the gateway cannot resolve (OpenAI's own
 * item, another organization's, evicted) is left as it is: OpenAI reads it, and a translator
 * refuses it with a 400 naming it.
 * Source: OpenAI API reference, "Responses" → "Create a model response" (`input` → "Item reference").
 */
import type { Json } from '../endpoints/types.ts';
import { ownEntry, type StoredEntry } from './types.ts';

/** An output item id the gateway gave: prefix, the request id's 32 hex digits, the output index. */
const MADE_ITEM_ID = /^(?:rs|msg|fc|ctc)_([0-9a-f]{32})_(\d{1,6})$/;

/** Response id and output index of an item id the gateway gave; null for any other id. */
export function madeItemOf(id: unknown): { responseId: string; index: number } | null {
  if (typeof id !== 'string') return null;
  const m = MADE_ITEM_ID.exec(id);
  return m === null ? null : { responseId: `resp_${m[1]}`, index: Number(m[2]) };
}

/**
 * The distinct response ids that `input`'s item references name (gateway-made items only), in order
 * of first mention; null when there are none (`input` not an array, or no such reference).
 */
export function referencedResponses(input: unknown): string[] | null {
  if (!Array.isArray(input)) return null;
  let ids: string[] | null = null;
  for (const item of input as unknown[]) {
    if (item === null || typeof item !== 'object' || (item as Json).type !== 'item_reference') continue;
    const made = madeItemOf((item as Json).id);
    if (made === null) continue;
    ids ??= [];
    if (!ids.includes(made.responseId)) ids.push(made.responseId);
  }
  return ids;
}

/**
 * `input` with each reference to an output item of a made response of `org` replaced by that item
 * (`entries`: the store's entry of each response id named); other items as they are. A new array.
 */
export function replaceReferences(input: unknown[], entries: ReadonlyMap<string, StoredEntry | null>, org: string): unknown[] {
  return input.map((item) => {
    if (item === null || typeof item !== 'object' || (item as Json).type !== 'item_reference') return item;
    const made = madeItemOf((item as Json).id);
    if (made === null) return item;
    const entry = ownEntry(entries.get(made.responseId) ?? null, org);
    if (entry?.kind !== 'made') return item;
    const found = (entry.response.output as Json[] | undefined)?.[made.index];
    return found !== undefined && found.id === (item as Json).id ? found : item;
  });
}
