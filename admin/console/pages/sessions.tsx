/**
 * Sessions: the organization's requests grouped by session (`Svc-Session-Id`, or Claude Code's and
 * Codex's own ids), newest last request first, in a time range, a page at a time; the open session
 * (components/session-detail.tsx) beside the list.
 */
import { useCallback, useState } from 'react';
import type { SessionSummary } from '../api.ts';
import { SessionDetail } from '../components/session-detail.tsx';
import { LoadMore } from '../components/load-more.tsx';
import { RANGES, rangeStart, type RangeKey } from '../filters.ts';
import { formatCost, formatInt, formatTime } from '../format.ts';
import { usePagedList } from '../paged-list.ts';
import { navigate } from '../router.ts';
import { useSession } from '../session.tsx';

/** Sessions per page. */
export const SESSION_PAGE_SIZE = 50;

/**
 * The end of every time range: the API wants both bounds, and the ranges are "since"; the year
 * 9999 (the latest it takes) keeps sessions logged after the page opened, or stamped by a server
 * clock ahead of the browser's, in the listing.
 */
const OPEN_END_MS = 253_402_300_799_999;

/** The API's time window of `range` as of `now`; null for all time. */
function timeWindow(range: RangeKey, now: number): { start: number; end: number } | null {
  const start = rangeStart(range, now);
  return start === null ? null : { start: Date.parse(start), end: OPEN_END_MS };
}

/** The session's name, or its id when it has none; the id always shows in the cell's tooltip. */
function SessionLabel({ s }: { s: SessionSummary }) {
  return s.session_name ? (
    <>
      <span data-testid="session-name">{s.session_name}</span> <code className="muted">{s.session_id}</code>
    </>
  ) : (
    <code data-testid="session-name">{s.session_id}</code>
  );
}

/** One session's row; `compact` (a session open beside the list) leaves out tokens and first time. */
function SessionRow({ s, open, compact }: { s: SessionSummary; open: boolean; compact: boolean }) {
  return (
    <tr data-testid="session-row" data-session-id={s.session_id} className={open ? 'selected clickable' : 'clickable'} onClick={() => navigate('sessions', s.session_id)}>
      <td className="ellipsis" title={s.session_name ? `${s.session_name}\n${s.session_id}` : s.session_id}>
        <SessionLabel s={s} />
      </td>
      <td className="num" data-testid="session-requests">{formatInt(s.request_count)}</td>
      {!compact && <td className="num" data-testid="session-tokens">{formatInt(s.total_tokens)}</td>}
      <td className="num" data-testid="session-cost">{formatCost(s.cost)}</td>
      <td className={`num ${s.errors > 0 ? 'status err' : 'muted'}`} data-testid="session-errors">{formatInt(s.errors)}</td>
      {!compact && <td className="muted">{formatTime(s.first_request_at)}</td>}
      <td className="muted">{formatTime(s.last_request_at)}</td>
    </tr>
  );
}

/** Props: the open session's id (from the route), if any. */
export function SessionsPage({ openId }: { openId: string | null }) {
  const { api } = useSession();
  const [range, setRange] = useState<RangeKey>('24h');
  // The range's start is fixed until the range changes or the list is refreshed, so the pages of
  // one listing agree on it.
  const [asOf, setAsOf] = useState(Date.now);
  const load = useCallback((offset: number, limit: number) => api.querySessions(timeWindow(range, asOf), limit, offset), [api, range, asOf]);
  const list = usePagedList(load, [load], SESSION_PAGE_SIZE, (s) => s.session_id);
  const compact = openId !== null;

  return (
    <div className={`sessions ${compact ? 'with-detail' : ''}`}>
      <div className="sessions-list">
        <header className="page-head">
          <h1>Sessions</h1>
          <span className="muted" data-testid="session-count">
            {formatInt(list.rows.length)}
            {list.done ? '' : '+'} sessions
          </span>
          <div className="spacer" />
          <select data-testid="session-range" value={range} onChange={(e) => { setRange(e.target.value as RangeKey); setAsOf(Date.now()); }}>
            {Object.keys(RANGES).map((r) => (
              <option key={r} value={r}>
                {r === 'all' ? 'all time' : `last ${r}`}
              </option>
            ))}
          </select>
          <button type="button" className="ghost" data-testid="session-refresh" onClick={() => setAsOf(Date.now())}>
            Refresh
          </button>
        </header>
        <table className="grid sessions-table">
          <thead>
            <tr>
              <th>Session</th>
              <th className="num">Requests</th>
              {!compact && <th className="num">Tokens</th>}
              <th className="num">Cost</th>
              <th className="num">Errors</th>
              {!compact && <th>First</th>}
              <th>Last</th>
            </tr>
          </thead>
          <tbody>
            {list.rows.map((s) => (
              <SessionRow key={s.session_id} s={s} open={s.session_id === openId} compact={compact} />
            ))}
          </tbody>
        </table>
        {list.rows.length === 0 && !list.loading && !list.failed && (
          <p className="muted pad" data-testid="sessions-empty">
            No sessions in this time range. Requests sent with a <code>Svc-Session-Id</code> header (or from Claude Code or Codex) are grouped here.
          </p>
        )}
        <LoadMore list={list} testid="session-load-more" />
      </div>
      {openId && <SessionDetail id={openId} onClose={() => navigate('sessions')} />}
    </div>
  );
}
