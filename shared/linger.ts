/**
 * "Lingering close" for HTTP servers that answer a request before reading its body (413, 401, ...).
 * Used by the proxy and by admin.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** After an error answered before the request body was read: how long and how much of the rest is read and discarded. */
export const LINGER_MS = 5_000;
/** After an error answered before the request body was read: the most bytes of the rest read and discarded. */
export const LINGER_BYTES = 64 * 1024 * 1024;

/**
 * "Lingering close" for a request answered before its body was read: the rest of the body is read
 * and discarded (up to {@link LINGER_MS} / {@link LINGER_BYTES}, then the connection is dropped).
 * When the connection is to close after the answer, Node would destroy the socket right after
 * writing it, and closing a socket with unread input makes the kernel send a reset that can
 * discard the answer before the client read it; so the socket only half-closes (FIN after the
 * answer) and is destroyed once the client closed its side or the bounds ran out.
 */
export function lingerAfterAnswer(req: IncomingMessage): void {
  const socket = req.socket as Socket & { destroySoon?: () => void };
  const nodeDestroySoon = socket.destroySoon;
  socket.destroySoon = () => {
    socket.destroySoon = nodeDestroySoon;
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    socket.once('end', () => socket.destroy());
    if (socket.writable) socket.end();
  };
  if (req.complete) return;
  let bytes = 0;
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  const stop = () => clearTimeout(timer);
  req.once('end', stop);
  req.once('close', stop);
  req.on('data', (c: Buffer) => {
    bytes += c.length;
    if (bytes > LINGER_BYTES) {
      stop();
      socket.destroy();
    }
  });
  req.resume();
}
