/**
 * Requests: the filter bar, the count, the virtualized table of the newest requests (new ones
 * appear as they are logged), a dataset from the current filter, and the open request beside it.
 */
import { Suspense, useCallback, useMemo, useState } from 'react';
import { DatasetFromFilter } from '../components/dataset-from-filter.tsx';
import { LoadBoundary } from '../components/load-boundary.tsx';
import { RequestFiltersBar } from '../components/request-filters.tsx';
import { RequestTable } from '../components/request-table.tsx';
import { EMPTY_FILTERS, toFilterTree, type RequestFilters } from '../filters.ts';
import { formatInt } from '../format.ts';
import { lazyWithRetry } from '../lazy-retry.ts';
import { useRequestFeed } from '../request-feed.ts';
import { navigate } from '../router.ts';

// The detail view brings the markdown renderer and sanitizer: loaded when a request is first opened.
const RequestDetail = lazyWithRetry(() => import('../components/request-detail.tsx'), (m) => m.RequestDetail);

/** Props: the request open in the detail panel (from the route), if any. */
export function RequestsPage({ openId }: { openId: string | null }) {
  const [filters, setFilters] = useState<RequestFilters>(EMPTY_FILTERS);
  const filterKey = JSON.stringify(filters);
  // The range's start is fixed when the filters change, so pages of one listing agree on it.
  const filter = useMemo(() => toFilterTree(filters), [filterKey]); // eslint-disable-line react-hooks/exhaustive-deps
  const feed = useRequestFeed(filter, filterKey);
  const open = useCallback((id: string) => navigate('requests', id), []);

  return (
    <div className={`requests ${openId ? 'with-detail' : ''}`}>
      <div className="requests-list">
        <header className="page-head">
          <h1>Requests</h1>
          <span className="muted" data-testid="request-count" data-loaded={feed.rows.length}>
            {feed.total !== null ? `${formatInt(feed.total)} requests` : `${formatInt(feed.rows.length)}${feed.done ? '' : '+'} requests`}
          </span>
          <div className="spacer" />
          <DatasetFromFilter filter={filter} />
        </header>
        <RequestFiltersBar value={filters} onChange={setFilters} />
        <RequestTable rows={feed.rows} done={feed.done} loading={feed.loading} openId={openId} onOpen={open} onLoadMore={feed.loadMore} />
      </div>
      {openId && (
        // Failing here leaves the table usable: only the detail pane says so.
        <LoadBoundary key={openId}>
          <Suspense fallback={<aside className="detail" aria-busy="true" />}>
            <RequestDetail id={openId} onClose={() => navigate('requests')} onRated={feed.patch} />
          </Suspense>
        </LoadBoundary>
      )}
    </div>
  );
}
