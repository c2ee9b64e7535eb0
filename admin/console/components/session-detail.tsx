/**
 * One session, opened from the Sessions list: its figures and its requests in time order, each
 * indented by the depth of its `Svc-Session-Path`. A request opens in the Requests page's detail.
 * Esc closes the session.
 */
import { useCallback, useRef, useState } from 'react';
import type { SessionRequest, SessionSummary } from '../api.ts';
import { formatCost, formatInt, formatMs, formatTime, orDash } from '../format.ts';
import { useKeydown } from '../hooks.ts';
import { usePagedList } from '../paged-list.ts';
import { isTyping, navigate, routeHash } from '../router.ts';
import { useSession } from '../session.tsx';
import { LoadMore } from './load-more.tsx';

/** A session's requests per page. */
export const SESSION_REQUESTS_PAGE_SIZE = 200;
/** Indentation per level of a session path (px). */
const INDENT_PX = 14;
/** Deeper paths indent no further, so the path text keeps room. */
const MAX_INDENT_LEVELS = 8;

/** The number of segments of a session path (`/plan/search` → 2); 0 for none. */
export function pathDepth(path: string | null): number {
  return path ? path.split('/').filter(Boolean).length : 0;
}

/** A span of time as `850 ms`, `12.3 s`, `4m 05s` or `2h 03m`. */
function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

function statusClass(status: number): string {
  if (status >= 500 || status <= 0) return 'status err';
  if (status >= 400) return 'status warn';
  return 'status ok';
}

/** The session's figures as tiles. */
function SessionFigures({ s }: { s: SessionSummary }) {
  const stat = (id: string, label: string, value: string, title?: string) => (
    <div className="stat" data-testid={`session-stat-${id}`} title={title}>
      <div className="muted">{label}</div>
      <div className="stat-value">{value}</div>
    </div>
  );
  const span = Date.parse(s.last_request_at) - Date.parse(s.first_request_at);
  return (
    <div className="stats">
      {stat('requests', 'Requests', formatInt(s.request_count))}
      {stat('tokens', 'Tokens', formatInt(s.total_tokens), `${formatInt(s.prompt_tokens)} in, ${formatInt(s.completion_tokens)} out`)}
      {stat('cost', 'Cost', formatCost(s.cost))}
      {stat('errors', 'Errors', formatInt(s.errors))}
      {stat('duration', 'Duration', Number.isFinite(span) ? formatDuration(span) : '—', `${formatTime(s.first_request_at)} – ${formatTime(s.last_request_at)}`)}
    </div>
  );
}

/** One request of the session's timeline; a click opens it on the Requests page. */
function SessionRequestRow({ r, index }: { r: SessionRequest; index: number }) {
  const indent = Math.min(Math.max(pathDepth(r.session_path) - 1, 0), MAX_INDENT_LEVELS) * INDENT_PX;
  const tokens = r.total_tokens ?? (r.prompt_tokens === null && r.completion_tokens === null ? null : (r.prompt_tokens ?? 0) + (r.completion_tokens ?? 0));
  return (
    <tr data-testid="session-request-row" data-request-id={r.request_id} className="clickable" onClick={() => navigate('requests', r.request_id)}>
      <td className="num muted">{index + 1}</td>
      <td>
        {/* A link as well as the row's click: the request opens from the keyboard too. */}
        <a href={routeHash('requests', r.request_id)} title={`Open request ${r.request_id}`}>
          {formatTime(r.request_created_at)}
        </a>
      </td>
      <td className="ellipsis session-path" title={r.session_path ?? undefined} data-testid="session-request-path" data-depth={pathDepth(r.session_path)} style={{ paddingLeft: 8 + indent }}>
        {r.session_path ? <code>{r.session_path}</code> : <span className="muted">no path</span>}
      </td>
      <td>
        <span className={statusClass(r.status)} data-testid="session-request-status">{r.status}</span>
      </td>
      <td data-testid="session-request-model">{orDash(r.model)}</td>
      <td className="num">{formatMs(r.latency_ms)}</td>
      <td className="num">{formatInt(tokens)}</td>
      <td className="num">{formatCost(r.cost)}</td>
    </tr>
  );
}

/** Props: the session id and the close handler. */
export function SessionDetail({ id, onClose }: { id: string; onClose: () => void }) {
  const { api } = useSession();
  // The figures come with every page of requests; the latest answer's are shown.
  const [figures, setFigures] = useState<SessionSummary | null>(null);
  const openId = useRef(id);
  openId.current = id;
  const load = useCallback(
    async (offset: number, limit: number) => {
      const { requests, ...summary } = await api.getSession(id, limit, offset);
      // A late answer for the session open before must not replace this one's figures.
      if (summary.session_id === openId.current) setFigures(summary);
      return requests;
    },
    [api, id],
  );
  const list = usePagedList(load, [load], SESSION_REQUESTS_PAGE_SIZE, (r) => r.request_id);
  useKeydown((e) => {
    if (e.key === 'Escape' && !isTyping(e)) onClose();
  });
  // Until this session's figures come, the previous session's must not show under its id.
  const shown = figures && figures.session_id === id ? figures : null;

  return (
    <aside className="session-detail" data-testid="session-detail" aria-label="Session">
      <header className="page-head">
        <div className="session-title">
          <h2 data-testid="session-title">{shown?.session_name ?? id}</h2>
          {shown?.session_name && <code className="muted">{id}</code>}
        </div>
        <div className="spacer" />
        <button type="button" className="ghost" data-testid="session-close" title="Close (Esc)" onClick={onClose}>
          ×
        </button>
      </header>
      {shown && <SessionFigures s={shown} />}
      <table className="grid session-requests">
        <thead>
          <tr>
            <th className="num">#</th>
            <th>Time</th>
            <th>Path</th>
            <th>Status</th>
            <th>Model</th>
            <th className="num">Latency</th>
            <th className="num">Tokens</th>
            <th className="num">Cost</th>
          </tr>
        </thead>
        <tbody>
          {list.rows.map((r, i) => (
            <SessionRequestRow key={r.request_id} r={r} index={i} />
          ))}
        </tbody>
      </table>
      <LoadMore list={list} testid="session-requests-load-more" />
    </aside>
  );
}
