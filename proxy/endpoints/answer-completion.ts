/**
 * Whether an answer is complete for its endpoint kind (its {@link AnswerCompletion}): what the
 * response cache (issue 18: "only complete, successful answers are stored") asks before storing a
 * miss's answer. The answer is read as the client got it, in the pieces it arrived in, and only at its
 * ends, since this runs on every cache miss:
 *   - a stream is complete when it ends with a blank line after its dialect's final event: the kind's
 *     `framing.doneData` event preceded by an event that is not an error (chat: `data: [DONE]`), or an
 *     event named in `finalEvents` (Messages: `message_stop`; Responses: `response.completed` or
 *     `response.incomplete`). A stream the provider ended early, or that ended in an error event
 *     (a provider's, or the one the gateway and its translators end a cut stream with), is not;
 *   - a non-streamed answer is complete when it is a JSON object (first byte `{`, last `}`, whitespace
 *     aside) whose first member does not make it an error object (the kind's `errorBody`); empty is not.
 * The streams the gateway translates end as the provider's own do when whole (the translators write
 * `[DONE]`, `message_stop`, `response.completed`/`response.incomplete`) and with an error event
 * (`response.failed` for Responses) when not, so one rule serves both.
 */
import { SseTail } from './sse-tail.ts';
import type { AnswerCompletion, EndpointKind } from './types.ts';

/** How many first bytes of a non-streamed body the kind's `errorBody` is tried on. */
export const BODY_HEAD_BYTES = 96;

/**
 * An OpenAI-format error body (chat completions, embeddings, Responses): `{"error": {…}}` or
 * `{"error": "…"}` (OpenAI API reference, "Error codes"; OpenAI-compatible servers), or
 * `{"object": "error", …}` (vLLM's and other OpenAI-compatible servers' ErrorResponse). A member
 * `"error": null` is not an error.
 */
export const OPENAI_ERROR_BODY = /^\s*\{\s*"(?:error"\s*:\s*[{"]|object"\s*:\s*"error")/;

/**
 * An Anthropic error body, `{"type": "error", "error": {…}}` (Anthropic API reference, "Errors"), or
 * the OpenAI-format `{"error": {…}}` some Anthropic-compatible servers answer with.
 */
export const ANTHROPIC_ERROR_BODY = /^\s*\{\s*"(?:type"\s*:\s*"error"|error"\s*:\s*[{"])/;

/** JSON's whitespace (RFC 8259 §2): space, tab, LF, CR. */
function isJsonSpace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/**
 * True when `bytes[start…start+length)` begin as an OpenAI-framed stream's error chunk: the
 * first {@link BODY_HEAD_BYTES} of it tested with {@link OPENAI_ERROR_BODY} (`{"error": {…}`,
 * `{"error": "…"`, vLLM's `{"object": "error", …}`). A chunk is read as latin1: the test's
 * characters are ASCII, and nothing beyond the chunk's first bytes is decoded.
 */
function isErrorChunk(bytes: Buffer, start: number, length: number): boolean {
  return OPENAI_ERROR_BODY.test(bytes.toString('latin1', start, start + Math.min(length, BODY_HEAD_BYTES)));
}

/** The last byte of `pieces` that is not JSON whitespace, or -1 when there is none. */
function lastNonSpace(pieces: readonly Buffer[]): number {
  for (let p = pieces.length - 1; p >= 0; p--) {
    const piece = pieces[p]!;
    for (let i = piece.length - 1; i >= 0; i--) if (!isJsonSpace(piece[i]!)) return piece[i]!;
  }
  return -1;
}

/** The first {@link BODY_HEAD_BYTES} bytes of `pieces` (fewer when the body is shorter), as latin1. */
function head(pieces: readonly Buffer[]): string {
  let text = '';
  for (let p = 0; p < pieces.length && text.length < BODY_HEAD_BYTES; p++) {
    const piece = pieces[p]!;
    text += piece.toString('latin1', 0, Math.min(piece.length, BODY_HEAD_BYTES - text.length));
  }
  return text;
}

/** A non-streamed answer: a JSON object that is not an error object (see the module comment). */
function isCompleteBody(completion: AnswerCompletion, pieces: readonly Buffer[]): boolean {
  if (lastNonSpace(pieces) !== 0x7d) return false;
  const start = head(pieces);
  return /^\s*\{/.test(start) && !completion.errorBody.test(start);
}

/** A stream: it ends with a blank line after the kind's final event (see the module comment). */
function isCompleteStream(completion: AnswerCompletion, doneData: string | null, pieces: readonly Buffer[]): boolean {
  const tail = new SseTail(pieces);
  if (!tail.terminated || !tail.lastEvent()) return false;
  if (tail.hasName()) {
    for (const name of completion.finalEvents) if (tail.nameIs(name)) return true;
    return false;
  }
  if (doneData === null || !tail.dataIs(doneData)) return false;
  // `[DONE]` closes a stream whatever came before: some servers (vLLM) send it after an error chunk.
  return tail.lastEvent() && !tail.nameIs('error') && !tail.dataMatches(isErrorChunk);
}

/**
 * True when a 2xx answer of `kind` (the bytes its client got, as `pieces` in order; `streamed` for an
 * SSE stream) is complete by the kind's {@link EndpointKind.completion} (see the module comment);
 * false for a kind whose answers are never stored (`completion` null) and for an empty answer.
 * Reads a body's first bytes and last byte, or a stream's last one or two events, only; never throws.
 */
export function isCompleteAnswer(kind: EndpointKind, pieces: readonly Buffer[], streamed: boolean): boolean {
  const completion = kind.completion;
  if (completion === null || pieces.length === 0) return false;
  return streamed ? isCompleteStream(completion, kind.framing?.doneData ?? null, pieces) : isCompleteBody(completion, pieces);
}
