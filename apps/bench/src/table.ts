import type { SuiteResult } from './suite';

/** Formats a suite result as an aligned text table. */
export function formatTable(result: SuiteResult): string {
  const columns = [...new Set(result.rows.flatMap((row) => Object.keys(row)))];
  const cell = (v: string | number | undefined): string =>
    v === undefined ? '' : typeof v === 'number' ? formatNumber(v) : v;
  const widths = columns.map((c) => Math.max(c.length, ...result.rows.map((r) => cell(r[c]).length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i])).join('  ');
  const out = [result.title, line(columns), line(widths.map((w) => '-'.repeat(w)))];
  for (const row of result.rows) out.push(line(columns.map((c) => cell(row[c]))));
  for (const note of result.notes ?? []) out.push(note);
  return out.join('\n');
}

function formatNumber(v: number): string {
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(1) : v.toFixed(3);
}
