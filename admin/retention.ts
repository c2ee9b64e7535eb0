/**
 * Retention: request data older than `retention-days` (default 90) is deleted once a day, in
 * batches of at most 5,000 rows, each its own short transaction, so inserts are never blocked for
 * long. Scores, dataset rows and inputs go with their request (foreign keys `on delete cascade`).
 */
import type { Logger } from 'pino';
import type { Sql } from './db.ts';

const BATCH = 5_000;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Deletes request rows created before `now − retentionDays` in bounded batches.
 * @returns how many rows were deleted.
 */
export async function deleteExpiredRequests(sql: Sql, retentionDays: number, now = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * DAY_MS);
  let total = 0;
  for (;;) {
    const result = await sql`
      delete from request_log where id in (
        select id from request_log where created_at < ${cutoff} limit ${BATCH}
      )`;
    total += result.count;
    if (result.count < BATCH) return total;
  }
}

/** Starts the daily job (first run one minute after start). `stop()` cancels it. */
export function startRetention(sql: Sql, retentionDays: number, logger: Logger): { stop(): void } {
  let timer: NodeJS.Timeout;
  const run = async () => {
    try {
      const deleted = await deleteExpiredRequests(sql, retentionDays);
      if (deleted > 0) logger.info({ deleted, retentionDays }, 'retention: deleted expired requests');
    } catch (err) {
      logger.warn({ err }, 'retention run failed; retrying tomorrow');
    }
    timer = setTimeout(run, DAY_MS);
    timer.unref();
  };
  timer = setTimeout(run, 60_000);
  timer.unref();
  return { stop: () => clearTimeout(timer) };
}
