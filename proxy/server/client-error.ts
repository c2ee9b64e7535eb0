/**
 * The server's `clientError` listener: a request Node's HTTP parser rejected (malformed, headers
 * too large, too slow) is answered with a JSON error in OpenAI's shape and the connection closed.
 */
import http, { type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';

/**
 * Answers 431 (`HPE_HEADER_OVERFLOW`), 408 (`ERR_HTTP_REQUEST_TIMEOUT`) or 400; a socket that is
 * gone, reset, or already carrying a response is destroyed instead. On a pipelined connection whose
 * earlier, complete request still waits for its answer, nothing is written: that answer goes out
 * first and the connection closes after it. Only the error's code is logged: `err.rawPacket` holds
 * the client's bytes (keys, bodies).
 */
export function answerClientError(logger: Logger, err: Error, socket: Duplex): void {
  const code = (err as { code?: string }).code;
  // A response already on its way on this socket cannot be followed by an error response.
  const current = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!socket.writable || code === 'ECONNRESET' || current?.headersSent) {
    socket.destroy();
    return;
  }
  logger.debug({ code }, 'malformed HTTP request');
  // The error is the next request's (its headers too slow or malformed) while an earlier complete
  // one waits on its provider: raw bytes written now would go out ahead of that answer and it
  // would be lost. Node closes the connection once a response that is not kept alive has finished.
  if (current && current.req.complete) {
    current.shouldKeepAlive = false;
    return;
  }
  const status = code === 'HPE_HEADER_OVERFLOW' ? 431 : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const body = JSON.stringify({ error: { message: `malformed HTTP request (${code ?? 'parse error'})`, type: 'invalid_request_error', param: null, code: 'bad_request' } });
  socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}
