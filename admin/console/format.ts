/** Number, time and size formatting shared by the pages. */

/** `—` for a missing value, else the value as text. */
export function orDash(v: string | number | null | undefined): string {
  return v === null || v === undefined || v === '' ? '—' : String(v);
}

/** A time as `HH:MM:SS` today, else `Mon D HH:MM:SS` (local time). */
export function formatTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const time = d.toLocaleTimeString(undefined, { hour12: false });
  const today = new Date().toDateString() === d.toDateString();
  return today ? time : `${d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })} ${time}`;
}

/** Milliseconds as `850 ms` or `2.41 s`. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

/** Below a cent: two significant digits, as decimals however small (toPrecision would write 8.0e-8). */
const SUB_CENT = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 2, useGrouping: false });

/** A US-dollar cost with enough digits for fractions of a cent (`$0.00000008`, `$0.0084`, `$0.5000`, `$12.35`). */
export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return '—';
  if (usd === 0) return '$0';
  if (usd < 0.01) return `$${SUB_CENT.format(usd)}`;
  return `$${usd.toFixed(usd < 10 ? 4 : 2)}`;
}

/** An integer with thousands separators. */
export function formatInt(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : Math.round(n).toLocaleString();
}

/** JSON text for display (2-space indent); a string that holds JSON is parsed first. */
export function prettyJson(value: unknown): string {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value ?? null, null, 2);
}
