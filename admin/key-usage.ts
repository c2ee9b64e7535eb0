/**
 * `api_key.last_used_at`: written off every request path, throttled. Uses are marked in memory
 * ({@link KeyUsage.mark}: admin's own REST authentication, and the `keys.used` reports proxies send
 * over the control plane every few seconds) and written by a timer in one UPDATE per organization.
 * A key written less than `minIntervalMs` ago stays marked until that interval has passed, so a key
 * in constant use costs one row update per interval, and no use is lost: `last_used_at` trails the
 * latest use by at most `minIntervalMs` plus `flushIntervalMs`. A failed write (database down) keeps
 * the marks for the next tick.
 *
 * Memory: the control plane passes only ids of keys of the link's organization (admin/controlplane.ts),
 * so the marks waiting for one organization are at most its keys; {@link KeyUsageOptions}'
 * `maxPendingPerOrganization` caps them all the same (marks past it are ignored until a write makes room).
 */
import type { Logger } from 'pino';
import type { Sql } from './db.ts';
import { isUuid } from './validation.ts';

/** Default of {@link KeyUsageOptions}' flush interval: how often the marks of keys used are written (ms). */
export const KEY_USAGE_FLUSH_INTERVAL_MS = 2_000;
/** Default of {@link KeyUsageOptions}' least interval between two writes of one key's `last_used_at` (ms). */
export const KEY_USAGE_MIN_INTERVAL_MS = 60_000;
/** Most key ids in one UPDATE (one array parameter, so any number fits; this bounds the statement's work). */
const MAX_IDS_PER_UPDATE = 5_000;
/**
 * Default of {@link KeyUsageOptions}' cap on one organization's marks waiting to be written: the
 * most keys a proxy holds for its organization (proxy/controlplane.ts MAX_KEYS), so no real
 * organization reaches it; it is a safety net should unchecked ids ever be marked.
 */
export const KEY_USAGE_MAX_PENDING_PER_ORGANIZATION = 100_000;

/** Options of {@link startKeyUsage}. */
export interface KeyUsageOptions {
  /** How often marks are written (ms). Default {@link KEY_USAGE_FLUSH_INTERVAL_MS}. */
  flushIntervalMs?: number;
  /** A key's `last_used_at` is written at most once per this many ms by this process. Default {@link KEY_USAGE_MIN_INTERVAL_MS}. */
  minIntervalMs?: number;
  /** Most marks of one organization waiting to be written; further new ids are ignored. Default {@link KEY_USAGE_MAX_PENDING_PER_ORGANIZATION}. */
  maxPendingPerOrganization?: number;
}

/** The running recorder. */
export interface KeyUsage {
  /**
   * Marks keys of `organizationId` as used now; O(1) per id, no I/O. Ids that are not UUIDs (a
   * proxy's report is not trusted further than its organization) are ignored.
   */
  mark(organizationId: string, keyIds: readonly string[]): void;
  /** How many marks of `organizationId` wait to be written (for tests and diagnostics). */
  pendingCount(organizationId: string): number;
  /** Writes the marks that are due now (the timer calls this). Never rejects. */
  flush(): Promise<void>;
  /**
   * Stops the timer and writes every mark left, throttled or not, waiting at most `timeoutMs`
   * (default 2,000: a database that does not answer must not hold up admin's shutdown). Never rejects.
   */
  close(timeoutMs?: number): Promise<void>;
}

/**
 * Starts the recorder's timer (unref'd).
 * @param sql the database; writes are `update api_key set last_used_at = now()` scoped to the organization.
 */
export function startKeyUsage(sql: Sql, logger: Pick<Logger, 'warn'>, options: KeyUsageOptions = {}): KeyUsage {
  const minIntervalMs = options.minIntervalMs ?? KEY_USAGE_MIN_INTERVAL_MS;
  // Keyed by `<organization id> <key id>`: a proxy's report of another organization's key id must
  // neither replace nor delay that organization's own mark (its UPDATE matches no row).
  /** Keys used and not written since: key → [organization id, key id]. */
  const pending = new Map<string, [string, string]>();
  /** Organization → how many of `pending` are its (for the cap). */
  const pendingPerOrg = new Map<string, number>();
  const maxPending = options.maxPendingPerOrganization ?? KEY_USAGE_MAX_PENDING_PER_ORGANIZATION;
  /** Key → when this process last wrote it (ms). */
  const written = new Map<string, number>();
  /** Marks ignored at the cap since the last write (logged then, once per tick, not per mark). */
  let overCap = 0;
  let running: Promise<void> | null = null;
  let failing = false;

  const write = async (all: boolean): Promise<void> => {
    if (overCap > 0) {
      logger.warn({ ignored: overCap, maxPendingPerOrganization: maxPending }, 'ignored key-usage marks: an organization has too many keys waiting to be written');
      overCap = 0;
    }
    const now = Date.now();
    for (const [id, at] of written) if (now - at >= minIntervalMs) written.delete(id);
    const due = new Map<string, string[]>();
    for (const [key, [org, id]] of pending) {
      if (!all && written.has(key)) continue;
      const ids = due.get(org) ?? [];
      if (ids.length >= MAX_IDS_PER_UPDATE) continue;
      ids.push(id);
      due.set(org, ids);
    }
    for (const [org, ids] of due) {
      try {
        await sql`update api_key set last_used_at = now() where organization_id = ${org} and id = any(${ids}::uuid[])`;
      } catch (err) {
        if (!failing) logger.warn({ err: (err as Error).message }, 'could not write api_key.last_used_at; will retry');
        failing = true;
        return;
      }
      failing = false;
      const at = Date.now();
      for (const id of ids) {
        if (pending.delete(`${org} ${id}`)) unmarked(org);
        written.set(`${org} ${id}`, at);
      }
    }
  };

  const unmarked = (org: string): void => {
    const n = (pendingPerOrg.get(org) ?? 1) - 1;
    if (n > 0) pendingPerOrg.set(org, n);
    else pendingPerOrg.delete(org);
  };

  const flush = (all = false): Promise<void> => {
    // One write at a time: a slow database must not pile up statements.
    if (!running) running = write(all).finally(() => (running = null));
    return running;
  };

  const timer = setInterval(() => void flush(), options.flushIntervalMs ?? KEY_USAGE_FLUSH_INTERVAL_MS);
  timer.unref();

  return {
    mark(organizationId, keyIds) {
      let count = pendingPerOrg.get(organizationId) ?? 0;
      for (const id of keyIds) {
        if (!isUuid(id)) continue;
        const keyId = id.toLowerCase();
        const key = `${organizationId} ${keyId}`;
        if (pending.has(key)) continue;
        if (count >= maxPending) {
          overCap++;
          continue;
        }
        pending.set(key, [organizationId, keyId]);
        count++;
      }
      if (count > 0) pendingPerOrg.set(organizationId, count);
    },
    pendingCount: (organizationId) => pendingPerOrg.get(organizationId) ?? 0,
    flush: () => flush(),
    async close(timeoutMs = 2_000) {
      clearInterval(timer);
      let deadline: NodeJS.Timeout | undefined;
      const gaveUp = new Promise<void>((resolve) => (deadline = setTimeout(resolve, timeoutMs)));
      const written = (async () => {
        await running;
        await flush(true);
      })();
      await Promise.race([written, gaveUp]);
      clearTimeout(deadline);
    },
  };
}
