/**
 * Hash routing: `#/<page>[/<id>]`. Hash routes need nothing from the server and survive a reload;
 * admin also answers unknown non-file paths with index.html, so a pasted `/requests` still loads
 * the console (app.tsx maps such a path onto the hash once).
 */
import { useEffect, useState } from 'react';

/** The console's pages, in nav order. */
export const PAGES = ['requests', 'sessions', 'dashboard', 'prompts', 'datasets', 'keys'] as const;
/** One of {@link PAGES}. */
export type Page = (typeof PAGES)[number];

/** A parsed route: the page and the id after it (an open request, session, prompt or dataset). */
export interface Route {
  page: Page;
  id: string | null;
}

/** Parses `#/page/id` (or a path `/page/id`); anything unknown is the Requests page. */
export function parseRoute(hash: string): Route {
  const [page, id] = hash.replace(/^#?\/?/, '').split('/');
  const known = (PAGES as readonly string[]).includes(page ?? '') ? (page as Page) : 'requests';
  return { page: known, id: id ? decodeURIComponent(id) : null };
}

/** The hash of a route. */
export function routeHash(page: Page, id?: string | null): string {
  return `#/${page}${id ? `/${encodeURIComponent(id)}` : ''}`;
}

/** Goes to a route (a history entry, so Back works). */
export function navigate(page: Page, id?: string | null): void {
  window.location.hash = routeHash(page, id);
}

/** The current route, updated on every hash change. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

/** True when a key event comes from a text field (page shortcuts then stay out of the way). */
export function isTyping(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  return !!t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable);
}
