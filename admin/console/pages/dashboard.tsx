/**
 * Dashboard: totals, then charts over the chosen range (requests, errors, tokens, cost, latency
 * p50/p95, time to first token) and bar charts of the breakdowns by model, provider, API key and
 * user, from `POST /v1/dashboard/query`. Refreshes every 30 s.
 */
import { useEffect, useMemo, useState } from 'react';
import type { BreakdownRow, DashboardData } from '../api.ts';
import { Chart } from '../components/chart.tsx';
import { BREAKDOWN_OPTIONS, breakdownData, lineData, timing, timingOptions } from '../dashboard-charts.ts';
import { RANGES, type RangeKey } from '../filters.ts';
import { formatCost, formatInt, formatMs } from '../format.ts';
import { useLoad } from '../hooks.ts';
import { useSession } from '../session.tsx';

const DASHBOARD_RANGES = ['1h', '24h', '7d', '30d'] as const;
const REFRESH_MS = 30_000;
/** A chart of one series needs no legend: its title says what it is. */
const SINGLE = { plugins: { legend: { display: false } } };
/** The cost chart: one series, dollars on its axis. */
const COST = {
  ...SINGLE,
  scales: { x: { ticks: { maxRotation: 0, autoSkipPadding: 16 } }, y: { beginAtZero: true, ticks: { callback: (v: string | number) => formatCost(Number(v)) } } },
};

function Totals({ data }: { data: DashboardData }) {
  const t = data.totals;
  const stats: Array<[string, string]> = [
    ['Requests', formatInt(t.requests)],
    ['Errors', `${formatInt(t.errors)}${t.requests ? ` (${((t.errors / t.requests) * 100).toFixed(1)}%)` : ''}`],
    ['Tokens in / out', `${formatInt(t.promptTokens)} / ${formatInt(t.completionTokens)}`],
    ['Cost', formatCost(t.costUsd)],
    ['Latency p50 / p95', `${formatMs(t.latencyP50Ms)} / ${formatMs(t.latencyP95Ms)}`],
    ['TTFT p50 / p95', `${formatMs(t.ttftP50Ms)} / ${formatMs(t.ttftP95Ms)}`],
  ];
  return (
    <div className="stats">
      {stats.map(([k, v]) => (
        <div className="stat" key={k}>
          <div className="muted">{k}</div>
          <div className="stat-value">{v}</div>
        </div>
      ))}
    </div>
  );
}

function Breakdown({ title, rows, testid }: { title: string; rows: BreakdownRow[]; testid: string }) {
  const data = useMemo(() => breakdownData(rows), [rows]);
  return <Chart type="bar" title={title} testid={testid} data={data} options={BREAKDOWN_OPTIONS} height={Math.max(140, Math.min(rows.length, 15) * 22 + 40)} />;
}

/** The dashboard page. */
export function DashboardPage() {
  const { api } = useSession();
  const [range, setRange] = useState<(typeof DASHBOARD_RANGES)[number]>('24h');
  const span = RANGES[range as RangeKey] as number;
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => setTick((n) => n + 1), REFRESH_MS);
    return () => clearInterval(t);
  }, []);
  const { data } = useLoad(() => {
    const end = Date.now();
    return api.dashboard({ filter: 'all', timeRange: { start: new Date(end - span).toISOString(), end: new Date(end).toISOString() } });
  }, [api, span, tick]);

  const charts = useMemo(() => {
    const s = data?.series ?? [];
    return {
      requests: lineData(s, span, [{ label: 'requests', value: (p) => p.requests }]),
      errors: lineData(s, span, [{ label: 'errors', value: (p) => p.errors }]),
      tokens: lineData(s, span, [
        { label: 'in', value: (p) => p.promptTokens },
        { label: 'out', value: (p) => p.completionTokens },
      ]),
      cost: lineData(s, span, [{ label: 'cost (USD)', value: (p) => p.costUsd }]),
      latency: lineData(s, span, [
        { label: 'p50 ms', value: timing((p) => p.latencyP50Ms) },
        { label: 'p95 ms', value: timing((p) => p.latencyP95Ms) },
      ]),
      ttft: lineData(s, span, [{ label: 'TTFT p50 ms', value: timing((p) => p.ttftP50Ms) }]),
      latencyOptions: timingOptions(s),
      ttftOptions: timingOptions(s, SINGLE),
    };
  }, [data, span]);
  const b = data?.breakdowns;

  return (
    <div className="page">
      <header className="page-head">
        <h1>Dashboard</h1>
        <div className="spacer" />
        <select data-testid="dashboard-range" value={range} onChange={(e) => setRange(e.target.value as typeof range)}>
          {DASHBOARD_RANGES.map((r) => (
            <option key={r} value={r}>
              last {r}
            </option>
          ))}
        </select>
      </header>
      {data && <Totals data={data} />}
      <div className="chart-grid">
        <Chart type="line" title="Requests" testid="chart-requests" data={charts.requests} options={SINGLE} />
        <Chart type="line" title="Errors" testid="chart-errors" data={charts.errors} options={SINGLE} />
        <Chart type="line" title="Tokens" testid="chart-tokens" data={charts.tokens} />
        <Chart type="line" title="Cost (USD)" testid="chart-cost" data={charts.cost} options={COST} />
        <Chart type="line" title="Latency" testid="chart-latency" data={charts.latency} options={charts.latencyOptions} />
        <Chart type="line" title="Time to first token" testid="chart-ttft" data={charts.ttft} options={charts.ttftOptions} />
      </div>
      <div className="chart-grid two">
        <Breakdown title="By model" testid="chart-by-model" rows={b?.model ?? []} />
        <Breakdown title="By provider" testid="chart-by-provider" rows={b?.provider ?? []} />
        <Breakdown title="By API key" testid="chart-by-key" rows={b?.apiKey ?? []} />
        <Breakdown title="By user" testid="chart-by-user" rows={b?.user ?? []} />
      </div>
    </div>
  );
}
