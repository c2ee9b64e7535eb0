/**
 * The Requests page's filter bar. Text inputs apply about 300 ms after the last keystroke (one
 * query per pause, not per key); the range select applies at once. `/` focuses the model filter.
 * A status that is none of the forms understood is marked, with a hint, rather than ignored unseen.
 */
import { useEffect, useRef, useState } from 'react';
import { CACHE_CHOICES, FEEDBACK_CHOICES, RANGES, statusOperators, type RequestFilters } from '../filters.ts';
import { useDebounced, useKeydown } from '../hooks.ts';
import { isTyping } from '../router.ts';

/** How long typing must pause before a filter applies (ms). */
const APPLY_AFTER_MS = 300;

/** The status filter's forms (filters.ts statusOperators). */
const STATUS_FORMS = 'status: 200, 4xx, error, ok';

const TEXT_FIELDS = [
  { key: 'model', testid: 'filter-model', placeholder: 'model' },
  { key: 'provider', testid: 'filter-provider', placeholder: 'provider' },
  { key: 'status', testid: 'filter-status', placeholder: STATUS_FORMS },
  { key: 'user', testid: 'filter-user', placeholder: 'user' },
  { key: 'propertyKey', testid: 'filter-property-key', placeholder: 'property' },
  { key: 'propertyValue', testid: 'filter-property-value', placeholder: 'value' },
  { key: 'text', testid: 'filter-text', placeholder: 'text in the prompt' },
] as const;

/** Props: the applied filters and the handler receiving new ones. */
export function RequestFiltersBar({ value, onChange }: { value: RequestFilters; onChange: (f: RequestFilters) => void }) {
  const [draft, setDraft] = useState(value);
  const settled = useDebounced(draft, APPLY_AFTER_MS);
  const first = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (JSON.stringify(settled) !== JSON.stringify(value)) onChange(settled);
    // Only a settled draft applies; `value` changes because of it.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [settled]);

  useKeydown((e) => {
    if (e.key === '/' && !isTyping(e)) {
      e.preventDefault();
      first.current?.focus();
    }
  });

  // A status typed that is none of the forms sets no condition: say so, or every row looks like a match.
  const badStatus = draft.status.trim() !== '' && statusOperators(draft.status) === null;

  // Selects apply at once (no typing to wait for).
  const choose = <K extends 'range' | 'cache' | 'feedback'>(key: K, v: RequestFilters[K]) => {
    const next = { ...draft, [key]: v };
    setDraft(next);
    onChange(next);
  };

  return (
    <div className="filters">
      {TEXT_FIELDS.map((f, i) => (
        <input
          key={f.key}
          ref={i === 0 ? first : undefined}
          data-testid={f.testid}
          className={`filter-${f.key}`}
          placeholder={f.placeholder}
          value={draft[f.key]}
          aria-invalid={f.key === 'status' && badStatus ? true : undefined}
          onChange={(e) => setDraft({ ...draft, [f.key]: e.target.value })}
          onKeyDown={(e) => e.key === 'Escape' && (e.target as HTMLInputElement).blur()}
        />
      ))}
      <select data-testid="filter-cache" aria-label="Cache" value={draft.cache} onChange={(e) => choose('cache', e.target.value as RequestFilters['cache'])}>
        {Object.entries(CACHE_CHOICES).map(([v, label]) => (
          <option key={v} value={v}>
            {label}
          </option>
        ))}
      </select>
      <select data-testid="filter-feedback" aria-label="Feedback" value={draft.feedback} onChange={(e) => choose('feedback', e.target.value as RequestFilters['feedback'])}>
        {Object.entries(FEEDBACK_CHOICES).map(([v, label]) => (
          <option key={v} value={v}>
            {label}
          </option>
        ))}
      </select>
      <select data-testid="filter-range" aria-label="Time range" value={draft.range} onChange={(e) => choose('range', e.target.value as RequestFilters['range'])}>
        {Object.keys(RANGES).map((r) => (
          <option key={r} value={r}>
            {r === 'all' ? 'all time' : `last ${r}`}
          </option>
        ))}
      </select>
      {badStatus && (
        <span className="filter-hint" role="status" data-testid="filter-status-hint">
          “{draft.status.trim()}” is no status, so no status filter applies. Write a code (200), a class (4xx), error (400 and up) or ok (below 400).
        </span>
      )}
    </div>
  );
}
