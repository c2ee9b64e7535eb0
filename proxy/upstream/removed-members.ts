/**
 * The `Svc-Removed-Members` response header: the request members a translator removed because the
 * provider's wire format has no place for them (Codex's hosted `web_search` tool on a chat provider,
 * Claude Code's `context_management`), as the JSON paths the log record's `removedMembers` holds
 * (`tools[8]`, `system[1].cache_control`), so a client sees at once that its request was not sent
 * whole. Paths are joined with `, `; a character outside printable ASCII, and `%` and `,`, are
 * percent-encoded (a member name is the client's own text); the value stops at
 * {@link MAX_HEADER_CHARS} with `...(+N more)`. Absent when nothing was removed or the request passed through.
 */

/** Most characters of the header value. */
export const MAX_HEADER_CHARS = 4096;

/** Characters a path keeps as they are: printable ASCII but `%` and `,`. */
const UNSAFE = /[^\x20-\x24\x26-\x2b\x2d-\x7e]/g;

/** One character percent-encoded as UTF-8 (a lone surrogate as U+FFFD's). */
function encodeChar(c: string): string {
  try {
    return encodeURIComponent(c);
  } catch {
    return '%EF%BF%BD';
  }
}

/** One path with its unsafe characters percent-encoded. */
function encodePath(path: string): string {
  return path.replace(UNSAFE, encodeChar);
}

/** The header value for `removed` (see the module comment); null when there is none. */
export function removedMembersHeader(removed: readonly string[] | undefined): string | null {
  if (removed === undefined || removed.length === 0) return null;
  let value = '';
  for (let i = 0; i < removed.length; i++) {
    const next = (i === 0 ? '' : ', ') + encodePath(removed[i]!);
    if (value.length + next.length > MAX_HEADER_CHARS) return `${value}, ...(+${removed.length - i} more)`;
    value += next;
  }
  return value;
}
