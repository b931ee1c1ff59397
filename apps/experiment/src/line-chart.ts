import { niceTicks } from '@loom/trainer/lib';

/** One line of a chart. */
export interface Series {
  readonly label: string;
  readonly points: readonly { readonly x: number; readonly y: number }[];
}

export interface LineChart {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly Series[];
}

const WIDTH = 760;
const HEIGHT = 440;
const MARGIN = { left: 72, right: 200, top: 44, bottom: 56 } as const;
const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Bounds of the finite values, widened a little (or to ±0.5 when every value is the same). */
function bounds(values: readonly number[]): [number, number] {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return [0, 1];
  const lo = Math.min(...finite);
  const hi = Math.max(...finite);
  const pad = (hi - lo) * 0.05 || 0.5;
  return [lo - pad, hi + pad];
}

/** A self-contained SVG of several series on shared axes, with ticks, axis labels and a legend. */
export function lineChartSvg(chart: LineChart): string {
  const points = chart.series.flatMap((s) => s.points);
  const [x0, x1] = bounds(points.map((p) => p.x));
  const [y0, y1] = bounds(points.map((p) => p.y));
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const sx = (x: number) => MARGIN.left + ((x - x0) / (x1 - x0)) * plotW;
  const sy = (y: number) => MARGIN.top + (1 - (y - y0) / (y1 - y0)) * plotH;
  const bottom = MARGIN.top + plotH;
  const right = MARGIN.left + plotW;
  const lines = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="24" text-anchor="middle" font-size="15">${escapeXml(chart.title)}</text>`,
    ...niceTicks(y0, y1, 6)
      .filter((t) => t >= y0 && t <= y1)
      .map(
        (t) =>
          `<line x1="${MARGIN.left}" x2="${right}" y1="${sy(t).toFixed(1)}" y2="${sy(t).toFixed(1)}" stroke="#e5e5e5"/>` +
          `<text x="${MARGIN.left - 6}" y="${(sy(t) + 4).toFixed(1)}" text-anchor="end">${t}</text>`,
      ),
    ...niceTicks(x0, x1, 8)
      .filter((t) => t >= x0 && t <= x1)
      .map(
        (t) =>
          `<line x1="${sx(t).toFixed(1)}" x2="${sx(t).toFixed(1)}" y1="${bottom}" y2="${bottom + 5}" stroke="#333"/>` +
          `<text x="${sx(t).toFixed(1)}" y="${bottom + 18}" text-anchor="middle">${t}</text>`,
      ),
    `<line x1="${MARGIN.left}" x2="${right}" y1="${bottom}" y2="${bottom}" stroke="#333"/>`,
    `<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${bottom}" stroke="#333"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 14}" text-anchor="middle">${escapeXml(chart.xLabel)}</text>`,
    `<text transform="translate(18 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escapeXml(chart.yLabel)}</text>`,
    ...chart.series.flatMap((s, i) => {
      const color = PALETTE[i % PALETTE.length];
      const finite = s.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
      const coords = finite.map((p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`);
      return [
        `<polyline fill="none" stroke="${color}" stroke-width="2" points="${coords.join(' ')}"/>`,
        ...coords.map(
          (c) => `<circle cx="${c.split(',')[0]}" cy="${c.split(',')[1]}" r="2.5" fill="${color}"/>`,
        ),
        `<rect x="${right + 14}" y="${MARGIN.top + 6 + i * 18}" width="14" height="4" fill="${color}"/>` +
          `<text x="${right + 34}" y="${MARGIN.top + 12 + i * 18}">${escapeXml(s.label)}</text>`,
      ];
    }),
    '</svg>',
  ];
  return `${lines.join('\n')}\n`;
}
