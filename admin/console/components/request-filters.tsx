/**
 * The Requests page's filter bar. Text inputs apply about 300 ms after the last keystroke (one
 * query per pause, not per key); the range select applies at once. `/` focuses the model filter.
 */
import { useEffect, useRef, useState } from 'react';
import { RANGES, type RangeKey, type RequestFilters } from '../filters.ts';
import { useDebounced, useKeydown } from '../hooks.ts';
import { isTyping } from '../router.ts';

/** How long typing must pause before a filter applies (ms). */
const APPLY_AFTER_MS = 300;

const TEXT_FIELDS = [
  { key: 'model', testid: 'filter-model', placeholder: 'model' },
  { key: 'provider', testid: 'filter-provider', placeholder: 'provider' },
  { key: 'status', testid: 'filter-status', placeholder: 'status: 200, 4xx, error' },
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

  const setRange = (range: RangeKey) => {
    const next = { ...draft, range };
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
          onChange={(e) => setDraft({ ...draft, [f.key]: e.target.value })}
          onKeyDown={(e) => e.key === 'Escape' && (e.target as HTMLInputElement).blur()}
        />
      ))}
      <select data-testid="filter-range" value={draft.range} onChange={(e) => setRange(e.target.value as RangeKey)}>
        {Object.keys(RANGES).map((r) => (
          <option key={r} value={r}>
            {r === 'all' ? 'all time' : `last ${r}`}
          </option>
        ))}
      </select>
    </div>
  );
}
