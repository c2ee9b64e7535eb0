/**
 * A chart.js chart as a React component: the chart is made once on its canvas and updated in
 * place when the data changes (no flicker, no leaked chart on unmount). Colours follow the theme.
 */
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart as ChartJs,
  Filler,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  type ChartData,
  type ChartOptions,
} from 'chart.js';
import { useEffect, useRef } from 'react';

ChartJs.register(BarController, BarElement, CategoryScale, Filler, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip);
ChartJs.defaults.font.family = getComputedStyle(document.documentElement).fontFamily || 'system-ui, sans-serif';
ChartJs.defaults.font.size = 11;

/** Series colours, in order. */
export const COLORS = ['#5b9cff', '#f5a524', '#3ecf8e', '#e5484d', '#a78bfa', '#22d3ee'];

/** The options every chart shares, with the chart's own on top. */
function withDefaults(options: ChartOptions<'line' | 'bar'> | undefined): ChartOptions<'line' | 'bar'> {
  // Counts and costs start at zero; time labels stay level and thin out instead of slanting.
  const scales =
    options?.indexAxis === 'y'
      ? { x: { beginAtZero: true, ticks: { precision: 0 } } }
      : { x: { ticks: { maxRotation: 0, autoSkipPadding: 16 } }, y: { beginAtZero: true } };
  return { responsive: true, maintainAspectRatio: false, animation: false, interaction: { mode: 'index', intersect: false }, scales, ...options };
}

/** Props: the chart type, its data and options, its title and the wrapper's `data-testid`. */
export interface ChartProps {
  type: 'line' | 'bar';
  data: ChartData<'line' | 'bar'>;
  options?: ChartOptions<'line' | 'bar'>;
  title: string;
  testid: string;
  height?: number;
}

/** One titled chart on a canvas. */
export function Chart({ type, data, options, title, testid, height = 180 }: ChartProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<ChartJs<'line' | 'bar'> | null>(null);

  useEffect(() => {
    // Axis text and grid lines in the theme's colours, read when the chart is made.
    const css = getComputedStyle(document.documentElement);
    ChartJs.defaults.color = css.getPropertyValue('--muted').trim() || '#8791a0';
    ChartJs.defaults.borderColor = css.getPropertyValue('--row-line').trim() || 'rgba(255,255,255,0.07)';
    chart.current = new ChartJs(canvas.current!, {
      type,
      data,
      options: withDefaults(options),
    });
    return () => {
      chart.current?.destroy();
      chart.current = null;
    };
    // Made once per type; data changes go through the effect below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [type]);

  useEffect(() => {
    const c = chart.current;
    if (!c) return;
    c.data = data;
    // A fresh plain object: spreading the chart's own (proxied) options back into it breaks chart.js.
    c.options = withDefaults(options);
    c.update('none');
  }, [data, options]);

  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <div className="chart-canvas" data-testid={testid} style={{ height }}>
        <canvas ref={canvas} role="img" aria-label={title} />
      </div>
    </figure>
  );
}
