/**
 * A request's feedback in its detail: the user's thumbs up or down, given or replaced with one
 * click (`POST /v1/request/{id}/feedback`), and when it was given.
 */
import { useState } from 'react';
import type { SvcRequest } from '../api.ts';
import { useSession } from '../session.tsx';

/** What a rating changes on the request (the members the table and the detail show). */
export type FeedbackPatch = Pick<SvcRequest, 'feedback_rating' | 'feedback_created_at'>;

/**
 * Props: the request, and `onRated` told of a rating the server stored (so the table's row shows it
 * too). A failed call leaves the rating as it was and shows the error in the banner.
 */
export function FeedbackControl({ request, onRated }: { request: SvcRequest; onRated?: (id: string, patch: FeedbackPatch) => void }) {
  const { api, reportError } = useSession();
  const [rating, setRating] = useState<FeedbackPatch>({ feedback_rating: request.feedback_rating ?? null, feedback_created_at: request.feedback_created_at ?? null });
  const [busy, setBusy] = useState(false);

  const rate = async (value: boolean) => {
    setBusy(true);
    try {
      await api.giveFeedback(request.request_id, value);
      // The server's own time is not returned; the next load of the request shows it.
      const patch = { feedback_rating: value, feedback_created_at: new Date().toISOString() };
      setRating(patch);
      onRated?.(request.request_id, patch);
    } catch (err) {
      reportError(err);
    } finally {
      setBusy(false);
    }
  };

  // Geometric arrows, not emoji: a server without an emoji font draws those as empty boxes.
  const button = (value: boolean, glyph: string, label: string) => (
    <button
      type="button"
      className={rating.feedback_rating === value ? 'rate chosen' : 'rate'}
      aria-pressed={rating.feedback_rating === value}
      aria-label={label}
      title={label}
      data-testid={value ? 'feedback-up' : 'feedback-down'}
      disabled={busy}
      onClick={() => void rate(value)}
    >
      {glyph}
    </button>
  );

  return (
    <section data-testid="feedback">
      <h3>Feedback</h3>
      <div className="feedback-row">
        {button(true, '▲ Up', 'Rate up (thumbs up)')}
        {button(false, '▼ Down', 'Rate down (thumbs down)')}
        <span className="muted" data-testid="feedback-state">
          {rating.feedback_rating === null ? 'not rated' : `rated ${rating.feedback_rating ? 'up' : 'down'} ${rating.feedback_created_at ? new Date(rating.feedback_created_at).toLocaleString() : ''}`}
        </span>
      </div>
    </section>
  );
}
