import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '@loom/models';
import { type LineChart, lineChartSvg } from './line-chart';

/** A Markdown report being written: text, tables and charts (each its own SVG file beside the report). */
export class Report {
  readonly #parts: string[] = [];
  readonly #charts = new Map<string, string>();

  constructor(readonly title: string) {
    this.#parts.push(`# ${title}`);
  }

  heading(text: string): this {
    this.#parts.push(`## ${text}`);
    return this;
  }

  paragraph(text: string): this {
    this.#parts.push(text);
    return this;
  }

  /** A table; every row must have one cell per header. */
  table(headers: readonly string[], rows: readonly (readonly (string | number)[])[]): this {
    const bad = rows.findIndex((r) => r.length !== headers.length);
    if (bad >= 0)
      throw new Error(`Report.table: row ${bad} has ${rows[bad].length} cells, expected ${headers.length}`);
    const line = (cells: readonly (string | number)[]) => `| ${cells.join(' | ')} |`;
    this.#parts.push([line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n'));
    return this;
  }

  /** A chart saved as `<name>.svg` and shown in the report. */
  chart(name: string, chart: LineChart): this {
    if (!/^[a-z0-9-]+$/.test(name))
      throw new Error(`Report.chart: name "${name}" must be lowercase letters, digits and -`);
    if (this.#charts.has(name))
      throw new Error(`Report.chart: a chart named "${name}" is already in the report`);
    this.#charts.set(name, lineChartSvg(chart));
    this.#parts.push(`![${chart.title}](${name}.svg)`);
    return this;
  }

  /** The report's Markdown. */
  markdown(): string {
    return `${this.#parts.join('\n\n')}\n`;
  }

  /** The names and SVG text of the charts. */
  charts(): ReadonlyMap<string, string> {
    return this.#charts;
  }

  /** Writes `report.md` and the charts into `dir` (each file atomically); returns the report's path. */
  write(dir: string): string {
    mkdirSync(dir, { recursive: true });
    const utf8 = new TextEncoder();
    for (const [name, svg] of this.#charts) writeFileAtomic(join(dir, `${name}.svg`), utf8.encode(svg));
    const path = join(dir, 'report.md');
    writeFileAtomic(path, utf8.encode(this.markdown()));
    return path;
  }
}
