/**
 * The input items the response store keeps and lists: a request's `input` as items, and the
 * `GET /responses/{id}/input_items` page of a stored conversation.
 * Source: OpenAI API reference, "Responses" → "Create a model response" (`input`: a string is one
 * user message) and "List input items" (`limit` 1–100, default 20; `order` `asc`|`desc`, default
 * `desc`; `after` an item id; the answer `{object: "list", data, first_id, last_id, has_more}`).
 */
import type { Json } from './types.ts';

/**
 * A request's `input` as items: a string as one user `message` with an `input_text` part; an array's
 * items as sent, an easy message (`{role, content}` without `type`) marked `type: "message"`;
 * anything else as none.
 */
export function inputItemsOf(input: unknown): Json[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
  if (!Array.isArray(input)) return [];
  const items: Json[] = [];
  for (const item of input as unknown[]) {
    if (!item || typeof item !== 'object') continue;
    const it = item as Json;
    items.push(it.type === undefined && typeof it.role === 'string' ? { type: 'message', ...it } : it);
  }
  return items;
}

/** Id prefixes OpenAI gives items, by type (others: `item`). */
const ID_PREFIX: Readonly<Record<string, string>> = { message: 'msg', function_call: 'fc', function_call_output: 'fco', reasoning: 'rs' };

/** The id prefix of an item `type` (the client's): own keys of {@link ID_PREFIX} only, so "constructor" is `item`. */
function idPrefix(type: unknown): string {
  return typeof type === 'string' && Object.hasOwn(ID_PREFIX, type) ? ID_PREFIX[type]! : 'item';
}

/**
 * Item `i` of response `responseId` as listed: its own `id`, or one made from the response id and its
 * position (so the same item has the same id in every page), and a message's string `content` as
 * one text part (`output_text` for the assistant's, else `input_text`).
 */
function listed(item: Json, i: number, responseId: string): Json {
  const out: Json = { ...item };
  if (typeof out.id !== 'string') out.id = `${idPrefix(out.type)}_${responseId.replace(/^resp_/, '')}${String(i).padStart(4, '0')}`;
  if (out.type === 'message' && typeof out.content === 'string') out.content = [{ type: out.role === 'assistant' ? 'output_text' : 'input_text', text: out.content }];
  return out;
}

/** What `GET …/input_items` asks for (its query). */
export interface ItemsQuery {
  limit: number;
  order: 'asc' | 'desc';
  after: string | null;
}

/**
 * Reads an input_items query string (`limit`, `order`, `after`; others ignored).
 * @returns the query, or a message naming the member that is not valid.
 */
export function itemsQuery(search: URLSearchParams): ItemsQuery | { invalid: string; param: string } {
  const rawLimit = search.get('limit');
  const limit = rawLimit === null ? 20 : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) return { invalid: 'limit must be an integer from 1 to 100', param: 'limit' };
  const order = search.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') return { invalid: 'order must be "asc" or "desc"', param: 'order' };
  return { limit, order, after: search.get('after') };
}

/** The page of a conversation's input items (`items`, oldest first) that `query` asks for, as OpenAI lists them. */
export function itemsPage(items: readonly Json[], responseId: string, query: ItemsQuery): Json {
  const all = items.map((item, i) => listed(item, i, responseId));
  if (query.order === 'desc') all.reverse();
  let start = 0;
  if (query.after !== null) {
    const at = all.findIndex((item) => item.id === query.after);
    start = at < 0 ? all.length : at + 1;
  }
  const data = all.slice(start, start + query.limit);
  return {
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: start + query.limit < all.length,
  };
}
