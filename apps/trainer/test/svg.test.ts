import { describe, expect, it } from 'vitest';
import { lossCurveSvg, niceTicks } from '../src/loss-svg';

describe('loss curve', () => {
  it('picks ticks at 1, 2 or 5 times a power of ten', () => {
    expect(niceTicks(0, 2000, 8)).toEqual([0, 500, 1000, 1500, 2000]);
    expect(niceTicks(0, 10, 5)).toEqual([0, 2, 4, 6, 8, 10]);
    expect(niceTicks(1.3, 4.2, 6)).toEqual([1.5, 2, 2.5, 3, 3.5, 4]);
  });

  it('draws the step losses, both estimates, axes and a legend, breaking lines at NaN', () => {
    const svg = lossCurveSvg(
      {
        steps: [
          { step: 1, loss: 4.1 },
          { step: 2, loss: 3.9 },
          { step: 3, loss: Number.NaN },
          { step: 4, loss: 3.2 },
          { step: 5, loss: 3.0 },
        ],
        evals: [
          { step: 0, trainLoss: 4.2, valLoss: 4.2 },
          { step: 5, trainLoss: 3.0, valLoss: 3.1 },
        ],
      },
      'stories <run>',
    );
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('stories &#60;run&#62;');
    expect(svg).toContain('>step</text>');
    expect(svg).toContain('loss (cross-entropy, nats per token)');
    expect(svg).toContain('validation loss (estimate)');
    expect(svg.match(/<polyline/g)).toHaveLength(4);
    expect(svg.match(/<circle/g)).toHaveLength(4);
    expect(svg).not.toContain('NaN');
  });
});
