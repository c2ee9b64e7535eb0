/**
 * The console's shell: sign-in until a key is held (sessionStorage), then the nav, the error
 * banner and the routed page. Number keys 1–6 switch pages (in nav order) when no field has focus.
 */
import { Suspense, useCallback, useEffect, useMemo, useState } from 'react';
import { ApiError, createApi } from './api.ts';
import { ErrorBanner } from './components/error-banner.tsx';
import { LoadBoundary } from './components/load-boundary.tsx';
import { Nav } from './components/nav.tsx';
import { ApiKeysPage } from './pages/api-keys.tsx';
import { DatasetsPage } from './pages/datasets.tsx';
import { RequestsPage } from './pages/requests.tsx';
import { SessionsPage } from './pages/sessions.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { lazyWithRetry } from './lazy-retry.ts';
import { isTyping, navigate, PAGES, parseRoute, useRoute } from './router.ts';
import { KEY_STORAGE, SessionContext, type Session } from './session.tsx';

// Pages with heavy libraries load when first opened (chart.js, the diff library): the Requests
// page, where the console starts, does not wait for them.
const DashboardPage = lazyWithRetry(() => import('./pages/dashboard.tsx'), (m) => m.DashboardPage);
const PromptsPage = lazyWithRetry(() => import('./pages/prompts.tsx'), (m) => m.PromptsPage);

/** The message shown for a failure. */
function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.status === 401 ? `signed out: the key was refused (${err.message})` : err.message;
  return err instanceof Error ? err.message : String(err);
}

/** The root component. */
export function App() {
  const [key, setKey] = useState(() => sessionStorage.getItem(KEY_STORAGE));
  const [error, setError] = useState<string | null>(null);
  const route = useRoute();

  // A client route loaded as a path (admin serves index.html for it) becomes the same hash route.
  useEffect(() => {
    if (!window.location.hash && window.location.pathname !== '/') {
      const r = parseRoute(window.location.pathname);
      history.replaceState(null, '', '/');
      navigate(r.page, r.id);
    }
  }, []);

  useEffect(() => setError(null), [route.page]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (isTyping(e) || e.ctrlKey || e.metaKey || e.altKey) return;
      const n = Number(e.key);
      if (n >= 1 && n <= PAGES.length) navigate(PAGES[n - 1]!);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const signIn = useCallback((k: string) => {
    sessionStorage.setItem(KEY_STORAGE, k);
    setError(null);
    setKey(k);
  }, []);
  const signOut = useCallback(() => {
    sessionStorage.removeItem(KEY_STORAGE);
    setKey(null);
    setError(null);
  }, []);
  const reportError = useCallback((err: unknown) => {
    // A refused key (revoked, perhaps on the API keys page) ends the session: back to sign-in.
    if (err instanceof ApiError && err.status === 401) {
      sessionStorage.removeItem(KEY_STORAGE);
      setKey(null);
    }
    setError(err === null ? null : messageOf(err));
  }, []);
  const session = useMemo<Session | null>(() => (key ? { api: createApi(key), signOut, reportError } : null), [key, signOut, reportError]);

  if (!session) {
    return (
      <>
        <ErrorBanner message={error} onClose={() => setError(null)} />
        <SignInPage onSignIn={signIn} onError={(m) => setError(m)} />
      </>
    );
  }
  return (
    <SessionContext.Provider value={session}>
      <div className="shell">
        <Nav page={route.page} onSignOut={signOut} />
        <main className="main">
          <ErrorBanner message={error} onClose={() => setError(null)} />
          <LoadBoundary key={route.page}>
            <Suspense fallback={<p className="muted pad">Loading…</p>}>
              {route.page === 'requests' && <RequestsPage openId={route.id} />}
              {route.page === 'sessions' && <SessionsPage openId={route.id} />}
              {route.page === 'dashboard' && <DashboardPage />}
              {route.page === 'prompts' && <PromptsPage openId={route.id} />}
              {route.page === 'datasets' && <DatasetsPage openId={route.id} />}
              {route.page === 'keys' && <ApiKeysPage />}
            </Suspense>
          </LoadBoundary>
        </main>
      </div>
    </SessionContext.Provider>
  );
}
