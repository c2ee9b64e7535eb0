/**
 * What shows instead of a page or panel that failed to load or render: a message and a Reload
 * button, where without it React would unmount the whole console to an empty page. Put a `key` on
 * it (the route) so that going elsewhere tries again.
 */
import { Component, type ReactNode } from 'react';

/**
 * True when `err` is a browser's failure to fetch a module of `import()`: Chromium's, Firefox's and
 * Safari's wordings.
 */
function isChunkFailure(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  return /dynamically imported module|importing a module script failed|error loading dynamically imported module/i.test(message);
}

/** Props: what it guards. */
interface Props {
  children: ReactNode;
}

/** The error boundary (React has them as class components only). */
export class LoadBoundary extends Component<Props, { error: unknown }> {
  override state: { error: unknown } = { error: null };

  /** Keeps the error: the next render shows the message instead of the children. */
  static getDerivedStateFromError(error: unknown): { error: unknown } {
    return { error };
  }

  /** The children, or the message once they failed. */
  override render() {
    const { error } = this.state;
    if (error === null) return this.props.children;
    // A missing chunk means this page runs an older build than admin serves: a reload fetches the current one.
    const message = isChunkFailure(error)
      ? 'This part of the console could not be loaded: admin was restarted or upgraded since the page was opened.'
      : `This part of the console failed: ${error instanceof Error ? error.message : String(error)}`;
    return (
      <div className="load-failed" role="alert" data-testid="load-failed">
        <p>{message}</p>
        <p className="muted">Reload the page to load the current version (you stay signed in).</p>
        <button type="button" data-testid="load-failed-reload" onClick={() => window.location.reload()}>
          Reload
        </button>
      </div>
    );
  }
}
