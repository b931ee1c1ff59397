import type { LossHistory } from './run-log';

const WIDTH = 800;
const HEIGHT = 480;
const MARGIN = { left: 70, right: 24, top: 44, bottom: 56 } as const;
/** Per-step losses beyond this many are averaged in buckets before drawing. */
const MAX_POINTS = 1000;
const COLORS = { step: '#9ecae1', train: '#1f77b4', val: '#ff7f0e', axis: '#333', grid: '#e5e5e5' } as const;

interface Point {
  readonly x: number;
  readonly y: number;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Tick values covering [lo, hi] at a step of 1, 2 or 5 times a power of ten, about `count` of them. */
export function niceTicks(lo: number, hi: number, count: number): number[] {
  const span = hi - lo || Math.abs(hi) || 1;
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const ticks: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

/** Means of consecutive buckets so that at most `max` points remain. */
function thin(points: readonly Point[], max: number): Point[] {
  if (points.length <= max) return [...points];
  const size = Math.ceil(points.length / max);
  const out: Point[] = [];
  for (let i = 0; i < points.length; i += size) {
    const bucket = points.slice(i, i + size);
    out.push({
      x: bucket.reduce((s, p) => s + p.x, 0) / bucket.length,
      y: bucket.reduce((s, p) => s + p.y, 0) / bucket.length,
    });
  }
  return out;
}

/** Runs of finite points: a NaN or infinite loss breaks the line. */
function finiteRuns(points: readonly Point[]): Point[][] {
  const runs: Point[][] = [[]];
  for (const p of points) {
    if (Number.isFinite(p.y)) runs[runs.length - 1].push(p);
    else if (runs[runs.length - 1].length > 0) runs.push([]);
  }
  return runs.filter((r) => r.length > 0);
}

/**
 * The loss curve as a self-contained SVG: the loss of every step (light), the train and
 * validation estimates of each evaluation (lines with dots), axes with ticks and labels,
 * and a legend.
 */
export function lossCurveSvg(history: LossHistory, title: string): string {
  const stepPoints = history.steps.map((s) => ({ x: s.step, y: s.loss }));
  const trainPoints = history.evals.map((e) => ({ x: e.step, y: e.trainLoss }));
  const valPoints = history.evals.map((e) => ({ x: e.step, y: e.valLoss }));
  const all = [...stepPoints, ...trainPoints, ...valPoints];
  const ys = all.map((p) => p.y).filter(Number.isFinite);
  const xMax = Math.max(1, ...all.map((p) => p.x));
  const yLo = ys.length > 0 ? Math.min(...ys) : 0;
  const yHi = ys.length > 0 ? Math.max(...ys) : 1;
  const pad = (yHi - yLo) * 0.05 || 0.5;
  const [y0, y1] = [Math.max(0, yLo - pad), yHi + pad];
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const sx = (x: number) => MARGIN.left + (x / xMax) * plotW;
  const sy = (y: number) => MARGIN.top + (1 - (y - y0) / (y1 - y0)) * plotH;
  const coords = (pts: readonly Point[]) =>
    pts.map((p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ');
  const polylines = (pts: readonly Point[], color: string, width: number) =>
    finiteRuns(pts).map(
      (run) => `<polyline fill="none" stroke="${color}" stroke-width="${width}" points="${coords(run)}"/>`,
    );
  const dots = (pts: readonly Point[], color: string) =>
    pts
      .filter((p) => Number.isFinite(p.y))
      .map((p) => `<circle cx="${sx(p.x).toFixed(1)}" cy="${sy(p.y).toFixed(1)}" r="3" fill="${color}"/>`);
  const bottom = MARGIN.top + plotH;
  const right = MARGIN.left + plotW;
  const xTicks = niceTicks(0, xMax, 8).filter((t) => t <= xMax);
  const yTicks = niceTicks(y0, y1, 6).filter((t) => t >= y0 && t <= y1);
  const legend: [string, string][] = [
    [COLORS.step, 'train loss (each step)'],
    [COLORS.train, 'train loss (estimate)'],
    [COLORS.val, 'validation loss (estimate)'],
  ];
  const lines = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="24" text-anchor="middle" font-size="15">${escapeXml(title)}</text>`,
    ...yTicks.map(
      (t) =>
        `<line x1="${MARGIN.left}" x2="${right}" y1="${sy(t).toFixed(1)}" y2="${sy(t).toFixed(1)}" stroke="${COLORS.grid}"/>` +
        `<text x="${MARGIN.left - 6}" y="${(sy(t) + 4).toFixed(1)}" text-anchor="end">${t}</text>`,
    ),
    ...xTicks.map(
      (t) =>
        `<line x1="${sx(t).toFixed(1)}" x2="${sx(t).toFixed(1)}" y1="${bottom}" y2="${bottom + 5}" stroke="${COLORS.axis}"/>` +
        `<text x="${sx(t).toFixed(1)}" y="${bottom + 18}" text-anchor="middle">${t}</text>`,
    ),
    `<line x1="${MARGIN.left}" x2="${right}" y1="${bottom}" y2="${bottom}" stroke="${COLORS.axis}"/>`,
    `<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${bottom}" stroke="${COLORS.axis}"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 14}" text-anchor="middle">step</text>`,
    `<text transform="translate(18 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">loss (cross-entropy, nats per token)</text>`,
    ...polylines(thin(stepPoints, MAX_POINTS), COLORS.step, 1),
    ...polylines(trainPoints, COLORS.train, 2),
    ...dots(trainPoints, COLORS.train),
    ...polylines(valPoints, COLORS.val, 2),
    ...dots(valPoints, COLORS.val),
    ...legend.map(
      ([color, label], i) =>
        `<rect x="${right - 190}" y="${MARGIN.top + 8 + i * 18}" width="14" height="4" fill="${color}"/>` +
        `<text x="${right - 170}" y="${MARGIN.top + 14 + i * 18}">${label}</text>`,
    ),
    '</svg>',
  ];
  return `${lines.join('\n')}\n`;
}
