import type { AttentionMap } from '../protocol';
import { tokenLabel } from './attention-text';

/** Where the matrix sits on the canvas: n × n cells of `cell` px, the first at (left, top). */
export interface HeatmapLayout {
  readonly n: number;
  readonly cell: number;
  readonly left: number;
  readonly top: number;
  readonly width: number;
  readonly height: number;
}

type Rgb = readonly [number, number, number];

/** The matrix side aimed at, in canvas pixels, and the bounds of a cell. */
const MATRIX_PX = 512;
const MIN_CELL = 2;
const MAX_CELL = 24;
const FONT_PX = 11;
const GAP = 6;

/** The canvas layout for n tokens whose longest axis label is `labelWidth` px: queries on the left, keys below. */
export function heatmapLayout(n: number, labelWidth: number): HeatmapLayout {
  const cell = Math.max(MIN_CELL, Math.min(MAX_CELL, Math.floor(MATRIX_PX / Math.max(n, 1))));
  const margin = Math.ceil(labelWidth) + GAP;
  return { n, cell, left: margin, top: GAP, width: margin + n * cell + GAP, height: GAP + n * cell + margin };
}

/** The cell (query row, key column) at canvas pixel (x, y), or undefined outside the matrix. */
export function cellAt(
  layout: HeatmapLayout,
  x: number,
  y: number,
): { row: number; column: number } | undefined {
  const column = Math.floor((x - layout.left) / layout.cell);
  const row = Math.floor((y - layout.top) / layout.cell);
  const inside = (i: number) => i >= 0 && i < layout.n;
  return inside(row) && inside(column) ? { row, column } : undefined;
}

/** Weights at or below this look empty: the colour scale spans three decades, up to 1. */
export const FAINTEST = 1e-3;

/** The colour of weight p on a log scale: the background at FAINTEST or less, the accent at 1. */
export function cellColour(p: number, background: Rgb, accent: Rgb): Rgb {
  const t = p > FAINTEST ? Math.min(1, 1 - Math.log10(p) / Math.log10(FAINTEST)) : 0;
  const mix = (c: number) => Math.round(background[c] + (accent[c] - background[c]) * t);
  return [mix(0), mix(1), mix(2)];
}

/** A CSS colour as the canvas paints it. */
function rgbOf(ctx: CanvasRenderingContext2D, css: string): Rgb {
  ctx.fillStyle = css;
  ctx.fillRect(0, 0, 1, 1);
  const [r, g, b] = ctx.getImageData(0, 0, 1, 1).data;
  return [r, g, b];
}

/** The matrix as pixels: every cell from its weight, zeros (above the diagonal) in the background colour. */
function matrixPixels(
  ctx: CanvasRenderingContext2D,
  map: AttentionMap,
  cell: number,
  colours: Rgb[],
): ImageData {
  const n = map.tokens.length;
  const side = n * cell;
  const image = ctx.createImageData(side, side);
  const row = new Uint8ClampedArray(side * 4);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const [r, g, b] = cellColour(map.probs[i * n + j], colours[0], colours[1]);
      for (let x = j * cell * 4; x < (j + 1) * cell * 4; x += 4) {
        row[x] = r;
        row[x + 1] = g;
        row[x + 2] = b;
        row[x + 3] = 255;
      }
    }
    for (let y = i * cell; y < (i + 1) * cell; y++) image.data.set(row, y * side * 4);
  }
  return image;
}

/**
 * Draws `map` on `canvas` in the page's colours (the canvas's CSS background and colour, and --accent): the
 * matrix, query tokens on the left and key tokens below it, rotated; labels are thinned out where cells are
 * smaller than the font. Returns the layout, for finding the cell under the pointer.
 */
export function drawHeatmap(canvas: HTMLCanvasElement, map: AttentionMap): HeatmapLayout {
  const ctx = canvas.getContext('2d');
  if (ctx === null) throw new Error('the attention view needs a 2D canvas, and this browser gave none');
  const style = getComputedStyle(canvas);
  const font = `${FONT_PX}px ${style.fontFamily}`;
  const labels = map.tokens.map(tokenLabel);
  ctx.font = font;
  const labelWidth = Math.max(0, ...labels.map((label) => ctx.measureText(label).width));
  const layout = heatmapLayout(labels.length, labelWidth);
  canvas.width = layout.width; // resizing resets the context's state
  canvas.height = layout.height;
  const background = rgbOf(ctx, style.backgroundColor);
  const accent = rgbOf(ctx, style.getPropertyValue('--accent') || style.color);
  ctx.fillStyle = style.backgroundColor;
  ctx.fillRect(0, 0, layout.width, layout.height);
  const { n, cell, left, top } = layout;
  ctx.putImageData(matrixPixels(ctx, map, cell, [background, accent]), left, top);
  ctx.font = font;
  ctx.fillStyle = style.color;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'right';
  const stride = Math.ceil(FONT_PX / cell);
  for (let i = 0; i < n; i += stride) {
    const middle = (i + 0.5) * cell;
    ctx.fillText(labels[i], left - GAP / 2, top + middle);
    ctx.save();
    ctx.translate(left + middle, top + n * cell + GAP / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText(labels[i], 0, 0);
    ctx.restore();
  }
  return layout;
}
