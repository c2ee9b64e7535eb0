/**
 * The colour theme: dark unless the person chose light (kept in localStorage, so it outlives the
 * session's key). The choice is a `data-theme` attribute on the root element; styles.css does the rest.
 */
const THEME_STORAGE = 'svc-console-theme';

/** The two themes. */
export type Theme = 'dark' | 'light';

/** The chosen theme (dark by default). */
export function currentTheme(): Theme {
  return localStorage.getItem(THEME_STORAGE) === 'light' ? 'light' : 'dark';
}

/** Applies `theme` to the page and remembers it. */
export function applyTheme(theme: Theme): void {
  document.documentElement.dataset.theme = theme;
  localStorage.setItem(THEME_STORAGE, theme);
}
