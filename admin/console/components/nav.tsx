/** The side navigation: one link per page (with its number shortcut) and sign-out. */
import { useState } from 'react';
import { PAGES, routeHash, type Page } from '../router.ts';
import { applyTheme, currentTheme } from '../theme.ts';

const LABELS: Record<Page, string> = { requests: 'Requests', sessions: 'Sessions', dashboard: 'Dashboard', prompts: 'Prompts', datasets: 'Datasets', keys: 'API keys' };

/** Props: the current page (highlighted) and the sign-out handler. */
export function Nav({ page, onSignOut }: { page: Page; onSignOut: () => void }) {
  const [theme, setTheme] = useState(currentTheme);
  const toggleTheme = () => {
    const next = theme === 'dark' ? 'light' : 'dark';
    applyTheme(next);
    setTheme(next);
  };
  return (
    <nav className="nav">
      <div className="brand">svc gateway</div>
      {PAGES.map((p, i) => (
        <a key={p} href={routeHash(p)} className={p === page ? 'active' : ''} data-testid={`nav-${p}`} title={`${LABELS[p]} (${i + 1})`}>
          <span>{LABELS[p]}</span>
          <kbd>{i + 1}</kbd>
        </a>
      ))}
      <div className="spacer" />
      <button type="button" className="ghost" onClick={toggleTheme} title="Switch the colour theme">
        {theme === 'dark' ? 'Light theme' : 'Dark theme'}
      </button>
      <button type="button" className="ghost" data-testid="signout" onClick={onSignOut}>
        Sign out
      </button>
    </nav>
  );
}
