/** The foot of an offset-paged list (../paged-list.ts): "Loading…" while a page comes, else "Load more" until the last page. */
import type { PagedList } from '../paged-list.ts';

/** Props: the list, and the button's test id. */
export function LoadMore({ list, testid }: { list: PagedList<unknown>; testid: string }) {
  if (list.loading) return <p className="muted pad">Loading…</p>;
  if (list.done || list.rows.length === 0) return null;
  return (
    <button type="button" className="ghost load-more" data-testid={testid} onClick={list.loadMore}>
      Load more
    </button>
  );
}
