import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { lineChartSvg } from '../src/line-chart';
import { Report } from '../src/report';

describe('Report', () => {
  it('writes the Markdown and one SVG per chart, linked from the report', () => {
    const report = new Report('A & B')
      .paragraph('text')
      .table(['x', 'y'], [[1, 'two']])
      .chart('loss-curve', {
        title: 'loss <per> step',
        xLabel: 'step',
        yLabel: 'loss',
        series: [
          {
            label: 'a',
            points: [
              { x: 0, y: 2 },
              { x: 1, y: 1 },
            ],
          },
        ],
      });
    const dir = mkdtempSync(join(tmpdir(), 'loom-report-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const path = report.write(dir);
    const markdown = readFileSync(path, 'utf8');
    expect(markdown).toBe(
      '# A & B\n\ntext\n\n| x | y |\n| --- | --- |\n| 1 | two |\n\n![loss <per> step](loss-curve.svg)\n',
    );
    const svg = readFileSync(join(dir, 'loss-curve.svg'), 'utf8');
    expect(svg).toContain('loss &#60;per&#62; step');
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
  });

  it('refuses a ragged table and a chart name that is not a plain file name', () => {
    const report = new Report('r');
    expect(() => report.table(['a', 'b'], [[1]])).toThrow('row 0 has 1 cells, expected 2');
    const chart = { title: 't', xLabel: 'x', yLabel: 'y', series: [] };
    expect(() => report.chart('../escape', chart)).toThrow('must be lowercase letters, digits and -');
    report.chart('one', chart);
    expect(() => report.chart('one', chart)).toThrow('already in the report');
  });
});

describe('lineChartSvg', () => {
  it('draws one line and one legend entry per series, placing larger values higher', () => {
    const svg = lineChartSvg({
      title: 't',
      xLabel: 'x',
      yLabel: 'y',
      series: [
        {
          label: 'low',
          points: [
            { x: 0, y: 0 },
            { x: 10, y: 0 },
          ],
        },
        {
          label: 'high',
          points: [
            { x: 0, y: 5 },
            { x: 10, y: 5 },
          ],
        },
      ],
    });
    const lines = [...svg.matchAll(/<polyline [^>]*points="([^"]*)"/g)].map((m) => m[1]);
    expect(lines).toHaveLength(2);
    const yOf = (points: string) => Number(points.split(' ')[0].split(',')[1]);
    expect(yOf(lines[1])).toBeLessThan(yOf(lines[0])); // SVG y grows downwards
    expect(svg).toContain('>low</text>');
    expect(svg).toContain('>high</text>');
  });
});
