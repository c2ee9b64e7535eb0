/**
 * Tool names as chat completions take them, and back. Chat tools are a flat list of functions named
 * `^[a-zA-Z0-9_-]{1,64}$`; Responses tools may sit in a `namespace` (Codex sends `multi_agent_v1` holding
 * `spawn_agent`, `close_agent`, …), and its calls name the function and the namespace apart
 * (`function_call.namespace`). So a namespaced function is sent as `<namespace>__<name>` (characters outside
 * `[a-zA-Z0-9_-]` become `_`; past 64 characters, or when that name is already another tool's, the first 55
 * characters, `_` and 8 hex digits of SHA-256 of namespace and name), and a call of that name is answered as the
 * original `name` with its `namespace`. Custom tools (free-form input) are sent as functions too (./tools.ts), and
 * their calls answered as `custom_tool_call` items, so their names are in the map as well.
 *
 * The map is derived from the request's `tools` alone ({@link toolNamesOf}), so it is the same for every attempt of a
 * request and can be rebuilt from the body; `translateRequest` keeps it on the call (`TranslatorCall.toolNames`) for
 * the response and stream translation.
 * Source: https://platform.openai.com/docs/api-reference/responses/create (`tools`: function, custom, namespace).
 */
import { createHash } from 'node:crypto';
import { isRecord } from '../shared/values.ts';
import type { ToolOrigin } from '../types.ts';

/** Sent (chat) tool name → where it came from; holds only the names a client would not recognise as sent: namespaced and custom tools. */
export type ToolNameMap = ReadonlyMap<string, ToolOrigin>;

const MAX_NAME = 64;

function digest8(namespace: string, name: string): string {
  return createHash('sha256').update(`${namespace}\u0000${name}`).digest('hex').slice(0, 8);
}

/** `<namespace>__<name>` with characters chat refuses replaced by `_`, hashed down to 64 characters when longer. */
export function flatToolName(namespace: string, name: string): string {
  const flat = `${namespace}__${name}`.replace(/[^a-zA-Z0-9_-]/g, '_');
  return flat.length <= MAX_NAME ? flat : hashedToolName(namespace, name);
}

/** The collision-free form: the first 55 characters of the flat name, `_`, 8 hex digits of the namespace and name's SHA-256. */
function hashedToolName(namespace: string, name: string): string {
  const flat = `${namespace}__${name}`.replace(/[^a-zA-Z0-9_-]/g, '_');
  return `${flat.slice(0, MAX_NAME - 9)}_${digest8(namespace, name)}`;
}

/** The map key of a (namespace, name) pair. */
function sourceKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}\u0000${name}`;
}

/** Both directions of one request's tool names. */
export interface ToolNames {
  /** Sent name → origin (what {@link ToolNameMap} holds). */
  readonly bySent: Map<string, ToolOrigin>;
  /** (namespace, name) of every namespaced or custom tool → its sent name. */
  readonly bySource: Map<string, string>;
}

function stringMember(value: Record<string, unknown>, key: string): string | undefined {
  return typeof value[key] === 'string' && value[key] !== '' ? (value[key] as string) : undefined;
}

/**
 * The names of a request's tools (untrusted JSON; what is malformed is left to ./tools.ts to refuse): top-level
 * functions keep their names; top-level custom tools keep theirs and are marked `custom`; the functions and custom
 * tools inside each `namespace` get {@link flatToolName}, or the hashed form when that name is taken.
 */
export function toolNamesOf(tools: unknown): ToolNames {
  const bySent = new Map<string, ToolOrigin>();
  const bySource = new Map<string, string>();
  if (!Array.isArray(tools)) return { bySent, bySource };
  const taken = new Set<string>();
  for (const tool of tools) {
    if (!isRecord(tool) || (tool.type !== 'function' && tool.type !== 'custom')) continue;
    const name = stringMember(tool, 'name');
    if (!name) continue;
    taken.add(name);
    if (tool.type === 'custom') {
      bySent.set(name, { name, custom: true });
      bySource.set(sourceKey(undefined, name), name);
    }
  }
  for (const tool of tools) {
    if (!isRecord(tool) || tool.type !== 'namespace' || !Array.isArray(tool.tools)) continue;
    const namespace = stringMember(tool, 'name');
    if (!namespace) continue;
    for (const inner of tool.tools) {
      if (!isRecord(inner) || (inner.type !== 'function' && inner.type !== 'custom')) continue;
      const name = stringMember(inner, 'name');
      if (!name) continue;
      let sent = flatToolName(namespace, name);
      if (taken.has(sent)) sent = hashedToolName(namespace, name);
      taken.add(sent);
      bySent.set(sent, inner.type === 'custom' ? { name, namespace, custom: true } : { name, namespace });
      bySource.set(sourceKey(namespace, name), sent);
    }
  }
  return { bySent, bySource };
}

/**
 * The chat name of a tool the client names by `name` and optional `namespace` (a `function_call` or
 * `custom_tool_call` item of the history, a `tool_choice`): its name in this request's map, else `name` itself
 * without a namespace, else {@link flatToolName} (a namespace the request no longer offers).
 */
export function sentToolName(names: ToolNames, name: string, namespace: string | undefined): string {
  return names.bySource.get(sourceKey(namespace, name)) ?? (namespace ? flatToolName(namespace, name) : name);
}

/** Where a tool name the provider called came from: the map's origin, or the name itself (a top-level function). */
export function toolOrigin(map: ToolNameMap | undefined, sent: string): ToolOrigin {
  return map?.get(sent) ?? { name: sent };
}
