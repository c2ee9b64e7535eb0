/**
 * Structured JSON logs (pino). Each process creates one logger at start and passes it down; request
 * ids go in as fields, bodies and keys never do (the redaction list is a last line of defence).
 */
import pino, { type Logger } from 'pino';

/** Creates the process logger. `name` is `proxy` or `admin`; `level` a pino level. */
export function createLogger(name: string, level = 'info'): Logger {
  return pino({
    name,
    level,
    redact: {
      paths: ['authorization', '*.authorization', 'headers.authorization', 'apiKey', '*.apiKey', 'key', 'password'],
      censor: '[redacted]',
    },
  });
}
export type { Logger };
