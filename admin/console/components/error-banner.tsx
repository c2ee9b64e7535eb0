/** The one place errors show: a banner above the page with the server's message and a dismiss button. */

/** Props: the message (nothing shown when null) and the dismiss handler. */
export function ErrorBanner({ message, onClose }: { message: string | null; onClose: () => void }) {
  if (!message) return null;
  return (
    <div className="error-banner" role="alert" data-testid="error-banner">
      <span>{message}</span>
      <button type="button" className="ghost" aria-label="Dismiss" onClick={onClose}>
        ×
      </button>
    </div>
  );
}
