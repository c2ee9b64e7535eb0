/** The dashboard's chart data, built from `POST /v1/dashboard/query`'s series and breakdowns. */
import type { ChartData, ChartOptions, Scale, TooltipItem } from 'chart.js';
import type { BreakdownRow, DashboardPoint } from './api.ts';
import { COLORS } from './components/chart.tsx';

/** One dataset's definition: its label and how to read its value from a point. */
interface Series {
  label: string;
  value: (p: DashboardPoint) => number | null;
}

/**
 * A timing (latency, TTFT) of a bucket: 0 where the bucket had no requests, so the line runs
 * along the axis through quiet time (as request and token counts do) instead of breaking into
 * lone dots; the tooltip of such a bucket says "no requests" ({@link timingOptions}).
 */
export function timing(read: (p: DashboardPoint) => number | null): (p: DashboardPoint) => number | null {
  return (p) => (p.requests === 0 ? 0 : read(p));
}

/** Options of a timing chart: its tooltip says "no requests" for an idle bucket, else the milliseconds. */
export function timingOptions(points: DashboardPoint[], base: ChartOptions<'line' | 'bar'> = {}): ChartOptions<'line' | 'bar'> {
  const label = (item: TooltipItem<'line' | 'bar'>) =>
    points[item.dataIndex]?.requests === 0 ? `${item.dataset.label}: no requests` : `${item.dataset.label}: ${Math.round(Number(item.parsed.y))}`;
  return { ...base, plugins: { ...base.plugins, tooltip: { callbacks: { label } } } };
}

/** A bucket's time as a short label: time of day for ranges within two days, else the date. */
export function timeLabel(iso: string, spanMs: number): string {
  const d = new Date(iso);
  if (spanMs <= 2 * 86_400_000) return d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', hour12: false });
  return d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' }) + (spanMs <= 8 * 86_400_000 ? ` ${d.getHours()}h` : '');
}

/** Line data of `series` over the points (filled when there is one series). */
export function lineData(points: DashboardPoint[], spanMs: number, series: Series[]): ChartData<'line'> {
  return {
    labels: points.map((p) => timeLabel(p.time, spanMs)),
    datasets: series.map((s, i) => ({
      label: s.label,
      data: points.map(s.value),
      borderColor: COLORS[i % COLORS.length],
      backgroundColor: `${COLORS[i % COLORS.length]}33`,
      fill: series.length === 1,
      // Dots while buckets are few (a lone bucket is a dot, not an invisible line); lines across empty buckets.
      pointRadius: points.length > 90 ? 0 : 2,
      spanGaps: true,
      borderWidth: 1.5,
      tension: 0.2,
    })),
  };
}

/** The longest breakdown label drawn, in characters: a longer one is cut at its end with "…". */
const MAX_LABEL_CHARS = 28;

/** `label` cut to {@link MAX_LABEL_CHARS} characters (code points: an emoji is not split) with "…". */
export function shortLabel(label: string): string {
  const chars = Array.from(label);
  return chars.length > MAX_LABEL_CHARS ? `${chars.slice(0, MAX_LABEL_CHARS - 1).join('')}…` : label;
}

/**
 * Options of a breakdown chart: horizontal bars from zero, whole counts, and names cut at their end
 * (chart.js cuts a name too long for its axis at the start, where API key and model names differ
 * least). The tooltip's title is the whole name.
 */
export const BREAKDOWN_OPTIONS: ChartOptions<'line' | 'bar'> = {
  indexAxis: 'y',
  scales: {
    x: { beginAtZero: true, ticks: { precision: 0 } },
    y: {
      ticks: {
        callback(this: Scale, value: string | number) {
          return shortLabel(this.getLabelForValue(Number(value)));
        },
      },
    },
  },
};

/** Bar data of a breakdown: requests and errors per group, the largest first (at most 15). */
export function breakdownData(rows: BreakdownRow[]): ChartData<'bar'> {
  const top = [...rows].sort((a, b) => b.requests - a.requests).slice(0, 15);
  return {
    labels: top.map((r) => r.label || r.key || '(none)'),
    datasets: [
      { label: 'requests', data: top.map((r) => r.requests), backgroundColor: COLORS[0] },
      { label: 'errors', data: top.map((r) => r.errors), backgroundColor: COLORS[3] },
    ],
  };
}
