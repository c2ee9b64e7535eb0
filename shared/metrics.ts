/**
 * Prometheus helpers (prom-client) shared by the proxy's and admin's `/metrics`.
 */
import { Counter, type Registry } from 'prom-client';

/**
 * Registers a counter whose value is read from `read()` at scrape time, for totals another
 * component keeps (queue drops, ingested records). `name` and `help` as in prom-client.
 */
export function mirroredCounter(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}
