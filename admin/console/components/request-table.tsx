/**
 * The Requests table: @tanstack/react-table for the columns, @tanstack/react-virtual so only the
 * rows in view are in the DOM (a million rows scroll as smoothly as a hundred). Reaching the end
 * asks for the next keyset page. j/k or the arrows move the selection, Enter opens it.
 */
import { flexRender, getCoreRowModel, useReactTable, type ColumnDef } from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { formatCost, formatInt, formatMs, formatTime, orDash } from '../format.ts';
import { useKeydown } from '../hooks.ts';
import type { RequestRow } from '../request-feed.ts';
import { answeredModel, providerName, requestedModel } from '../request-names.ts';
import { isTyping } from '../router.ts';

const ROW_HEIGHT = 30;
/** The sticky header's height: the rows start below it in the scroll container. */
const HEAD_HEIGHT = 28;
/** How many rows before the end the next page is asked for. */
const PREFETCH_ROWS = 50;

/** The caller's own properties (the gateway's `svc-` ones are shown in the detail view). */
function userProperties(p: Record<string, string>): string {
  return Object.entries(p)
    .filter(([k]) => !k.startsWith('svc-'))
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
}

function scoreText(s: Record<string, number>): string {
  return Object.entries(s ?? {})
    .map(([k, v]) => `${k}:${v}`)
    .join(' ');
}

function statusClass(status: number): string {
  if (status >= 500 || status <= 0) return 'status err';
  if (status >= 400) return 'status warn';
  return 'status ok';
}

/** A cache hit's badge and the user's rating, if any: what sets a row apart beyond its numbers. */
function Flags({ row }: { row: RequestRow }) {
  return (
    <>
      {row.cache_reference_id && (
        <span className="badge cache-hit" title={`Answered from the cache: the answer of ${row.cache_reference_id}`}>
          hit
        </span>
      )}
      {row.feedback_rating !== null && row.feedback_rating !== undefined && (
        <span className={row.feedback_rating ? 'rating up' : 'rating down'} title={row.feedback_rating ? 'Rated up' : 'Rated down'}>
          {row.feedback_rating ? '▲' : '▼'}
        </span>
      )}
    </>
  );
}

/** The model asked for, which the model filter matches; the one that answered, when another, on hover. */
function ModelCell({ row }: { row: RequestRow }) {
  const answered = answeredModel(row);
  return <span title={answered ? `answered by ${answered}` : undefined}>{orDash(requestedModel(row))}</span>;
}

/** Columns right-aligned as numbers. */
const NUMERIC = new Set(['latency', 'ttft', 'in', 'out', 'cost']);

/** Columns left out while a request is open beside the table. */
const COMPACT_HIDDEN = new Set(['kind', 'ttft', 'in', 'out', 'user', 'props', 'score']);

const COLUMNS: ColumnDef<RequestRow>[] = [
  { id: 'time', header: 'Time', size: 132, cell: (c) => formatTime(c.row.original.request_created_at) },
  { id: 'status', header: 'Status', size: 64, cell: (c) => <span className={statusClass(c.row.original.response_status)}>{c.row.original.response_status}</span> },
  { id: 'flags', header: '', size: 64, cell: (c) => <Flags row={c.row.original} /> },
  { id: 'kind', header: 'Kind', size: 90, cell: (c) => orDash(c.row.original.properties['svc-endpoint'] ?? 'chat') },
  { id: 'provider', header: 'Provider', size: 96, cell: (c) => orDash(providerName(c.row.original.provider)) },
  { id: 'model', header: 'Model', size: 200, cell: (c) => <ModelCell row={c.row.original} /> },
  { id: 'latency', header: 'Latency', size: 80, cell: (c) => formatMs(c.row.original.delay_ms) },
  { id: 'ttft', header: 'TTFT', size: 76, cell: (c) => formatMs(c.row.original.time_to_first_token) },
  { id: 'in', header: 'In', size: 72, cell: (c) => formatInt(c.row.original.prompt_tokens) },
  { id: 'out', header: 'Out', size: 72, cell: (c) => formatInt(c.row.original.completion_tokens) },
  { id: 'cost', header: 'Cost', size: 100, cell: (c) => formatCost(c.row.original.cost) },
  { id: 'user', header: 'User', size: 120, cell: (c) => orDash(c.row.original.request_user_id) },
  { id: 'props', header: 'Properties', size: 220, cell: (c) => userProperties(c.row.original.properties) },
  { id: 'score', header: 'Score', size: 100, cell: (c) => scoreText(c.row.original.scores) },
];

/** Props: the rows, whether more can load, the open row, and the handlers. */
export interface RequestTableProps {
  rows: RequestRow[];
  done: boolean;
  loading: boolean;
  openId: string | null;
  onOpen: (id: string) => void;
  onLoadMore: () => void;
}

/** The virtualized, infinitely scrolling table. */
export function RequestTable({ rows, done, loading, openId, onOpen, onLoadMore }: RequestTableProps) {
  // Beside an open request the table narrows to the columns that tell rows apart at a glance.
  const compact = openId !== null;
  const columnVisibility = useMemo(() => (compact ? Object.fromEntries([...COMPACT_HIDDEN].map((id) => [id, false])) : {}), [compact]);
  const table = useReactTable({ data: rows, columns: COLUMNS, state: { columnVisibility }, getCoreRowModel: getCoreRowModel(), getRowId: (r) => r.request_id });
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({ count: rows.length, getScrollElement: () => scrollRef.current, estimateSize: () => ROW_HEIGHT, overscan: 20, scrollMargin: HEAD_HEIGHT });
  const [selected, setSelected] = useState(0);
  const items = virtualizer.getVirtualItems();
  const lastIndex = items.length ? items[items.length - 1]!.index : -1;
  const template = useMemo(() => COLUMNS.filter((c) => !compact || !COMPACT_HIDDEN.has(c.id!)).map((c) => `${c.size}px`).join(' ') + ' 1fr', [compact]);

  // Rows arriving on top must not move what the reader is looking at: keep the scroll position
  // and the selection on the same rows (unless the view is at the very top, where new rows show).
  const firstId = useRef<string | null>(null);
  useLayoutEffect(() => {
    const prev = firstId.current;
    firstId.current = rows[0]?.request_id ?? null;
    if (!prev || prev === firstId.current) return;
    const shift = rows.findIndex((r) => r.request_id === prev);
    if (shift <= 0) return;
    setSelected((s) => (s > 0 ? s + shift : s));
    const el = scrollRef.current;
    if (el && el.scrollTop > 0) el.scrollTop += shift * ROW_HEIGHT;
  }, [rows]);

  useEffect(() => {
    if (!done && !loading && rows.length > 0 && lastIndex >= rows.length - PREFETCH_ROWS) onLoadMore();
  }, [lastIndex, rows.length, done, loading, onLoadMore]);

  useKeydown((e) => {
    if (isTyping(e) || rows.length === 0) return;
    const move = e.key === 'j' || e.key === 'ArrowDown' ? 1 : e.key === 'k' || e.key === 'ArrowUp' ? -1 : 0;
    if (move) {
      e.preventDefault();
      const next = Math.max(0, Math.min(rows.length - 1, selected + move));
      setSelected(next);
      virtualizer.scrollToIndex(next, { align: 'auto' });
    } else if (e.key === 'Enter' && rows[selected] && !(e.target instanceof HTMLButtonElement || e.target instanceof HTMLAnchorElement)) {
      onOpen(rows[selected]!.request_id);
    }
  });

  const modelRows = table.getRowModel().rows;
  // One scroll container holds the sticky header and the rows, so both scroll sideways together.
  return (
    <div className="rtable" role="table" aria-rowcount={rows.length}>
      <div className="rtable-body" ref={scrollRef}>
        <div className="rtable-head" role="row" style={{ gridTemplateColumns: template, height: HEAD_HEIGHT }}>
          {table.getFlatHeaders().filter((h) => h.column.getIsVisible()).map((h) => (
            <div key={h.id} role="columnheader" className={NUMERIC.has(h.column.id) ? 'num' : ''}>
              {flexRender(h.column.columnDef.header, h.getContext())}
            </div>
          ))}
          <div />
        </div>
        <div className="rtable-rows" style={{ height: virtualizer.getTotalSize() }}>
          {items.map((v) => {
            const row = modelRows[v.index]!;
            const id = row.original.request_id;
            const cls = ['rtable-row', id === openId ? 'open' : '', v.index === selected ? 'selected' : ''].join(' ');
            return (
              <div
                key={row.id}
                role="row"
                className={cls}
                data-testid="request-row"
                data-request-id={id}
                style={{ gridTemplateColumns: template, height: ROW_HEIGHT, transform: `translateY(${v.start - HEAD_HEIGHT}px)` }}
                onClick={() => {
                  setSelected(v.index);
                  onOpen(id);
                }}
              >
                {row.getVisibleCells().map((cell) => (
                  <div key={cell.id} role="cell" data-column={cell.column.id} className={NUMERIC.has(cell.column.id) ? 'num' : ''}>
                    {flexRender(cell.column.columnDef.cell, cell.getContext())}
                  </div>
                ))}
                <div />
              </div>
            );
          })}
        </div>
        {rows.length === 0 && !loading && <div className="empty">No requests match these filters.</div>}
        {loading && <div className="loading-row">Loading…</div>}
      </div>
    </div>
  );
}
