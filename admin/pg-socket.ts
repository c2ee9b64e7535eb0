/**
 * The TCP connection postgres.js opens to PostgreSQL, with Nagle's algorithm off (TCP_NODELAY).
 * A COPY ends with two writes, the data and then the 5-byte CopyDone; with Nagle on, the kernel
 * holds CopyDone until the server acknowledges the data, which the server delays (40 ms on Linux)
 * while it waits for more: every COPY of a log batch took 40 ms longer (bench/ingest.ts, admin's
 * COPY in admin/request-log-copy.ts). postgres.js has no option for it, only `socket`, a factory
 * whose socket it expects connected.
 */
import net from 'node:net';
import { once } from 'node:events';

/** What postgres.js passes its `socket` factory: its parsed options (host and port lists, or a Unix socket path). */
export interface SocketTarget {
  host: string[];
  port: number[];
  path?: string | false;
}

/**
 * postgres.js's `socket` option: a connected socket with TCP_NODELAY, to the first host and port
 * (or the Unix socket `path`). A second host of a multi-host URL is not tried.
 * @throws the connection error (postgres.js reports it as the query's error and reconnects later).
 */
export async function noDelaySocket(target: SocketTarget): Promise<net.Socket> {
  const socket = target.path ? net.connect(target.path) : net.connect(target.port[0] ?? 5432, target.host[0] ?? 'localhost');
  socket.setNoDelay(true);
  try {
    await once(socket, 'connect');
  } catch (err) {
    socket.destroy();
    throw err;
  }
  return socket;
}
