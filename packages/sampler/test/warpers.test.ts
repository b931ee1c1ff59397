import { describe, expect, it } from 'vitest';
import { applyMinP, applyTemperature, applyTopK, applyTopP, argmax, softmax } from '../src/index';
import { kept, logitsOf, randomLogits, row } from './helpers';

describe('argmax', () => {
  it('picks the largest logit, the lowest id among ties', () => {
    expect(argmax(row(1, 3, 3, 2))).toBe(1);
    expect(argmax(row(-Infinity, -5, -Infinity))).toBe(1);
    expect(argmax(row(7))).toBe(0);
  });

  it('has nothing to choose when every token is banned', () => {
    expect(() => argmax(row(-Infinity, -Infinity))).toThrow(
      'argmax: all 2 logits are -Infinity, so there is no token to choose',
    );
  });
});

describe('applyTemperature', () => {
  it('maps logits to (logit - max) / T', () => {
    expect(Array.from(applyTemperature(row(1, 2, 3), 2))).toEqual([-1, -0.5, 0]);
    expect(Array.from(applyTemperature(row(1, -Infinity, 3), 0.5))).toEqual([-4, -Infinity, 0]);
  });

  it('gives the distribution softmax(logit / T)', () => {
    const logits = randomLogits(1, 50);
    const scaled = softmax(applyTemperature(logits.slice(), 0.7));
    const reference = softmax(logits.map((value) => value / 0.7));
    scaled.forEach((p, i) => {
      expect(p).toBeCloseTo(reference[i], 6);
    });
  });

  it('T = 1 changes nothing; a tiny T does not overflow', () => {
    expect(Array.from(applyTemperature(row(1, 2), 1))).toEqual([1, 2]);
    expect(Array.from(applyTemperature(row(1e30, 0), 1e-30))).toEqual([0, -Infinity]);
  });

  it('T = 0 keeps only the argmax, the lowest id among ties', () => {
    expect(Array.from(applyTemperature(row(1, 3, 2), 0))).toEqual([-Infinity, 3, -Infinity]);
    expect(Array.from(applyTemperature(row(3, 1, 3), 0))).toEqual([3, -Infinity, -Infinity]);
  });

  it('rejects a negative temperature', () => {
    expect(() => applyTemperature(row(1), -1)).toThrow(
      'temperature must be in [0, ∞), got -1; 0 means greedy',
    );
  });
});

describe('applyTopK', () => {
  it('keeps the k largest logits', () => {
    expect(Array.from(applyTopK(row(1, 5, 3, 4, 2), 2))).toEqual([-Infinity, 5, -Infinity, 4, -Infinity]);
  });

  it('keeps exactly k among ties, the lowest ids', () => {
    expect(kept(applyTopK(row(5, 1, 5, 5), 2))).toEqual([0, 2]);
    expect(kept(applyTopK(row(2, 9, 9), 1))).toEqual([1]);
  });

  it('k = 0 and k ≥ V keep everything', () => {
    expect(Array.from(applyTopK(row(1, 2, 3), 0))).toEqual([1, 2, 3]);
    expect(Array.from(applyTopK(row(1, 2, 3), 3))).toEqual([1, 2, 3]);
    expect(Array.from(applyTopK(row(1, 2, 3), 100))).toEqual([1, 2, 3]);
  });

  it('leaves banned tokens banned when fewer than k are possible', () => {
    expect(kept(applyTopK(row(-Infinity, 2, -Infinity, -Infinity), 2))).toEqual([1]);
  });

  it('matches a full sort on a 32000-token row', () => {
    const logits = randomLogits(2, 32000);
    const order = Array.from(logits.keys()).sort((a, b) => logits[b] - logits[a] || a - b);
    expect(kept(applyTopK(logits.slice(), 40))).toEqual(order.slice(0, 40).sort((a, b) => a - b));
  });

  it('rejects a k that is not a non-negative integer', () => {
    expect(() => applyTopK(row(1), 2.5)).toThrow(
      'topK must be an integer in [0, ∞), got 2.5; 0 turns it off',
    );
  });
});

/** Top-p by a full sort: the reference the fast version must match. */
function topPReference(logits: Float32Array, p: number): number[] {
  const probs = softmax(logits);
  const order = Array.from(logits.keys()).sort((a, b) => probs[b] - probs[a] || a - b);
  const ids: number[] = [];
  let mass = 0;
  for (const id of order) {
    if (probs[id] === 0) break;
    ids.push(id);
    mass += probs[id];
    if (mass >= p) break;
  }
  return ids.sort((a, b) => a - b);
}

describe('applyTopP', () => {
  it('keeps the smallest most-probable set holding at least p', () => {
    const probs = [0.15, 0.5, 0.05, 0.3];
    expect(kept(applyTopP(logitsOf(...probs), 0.4))).toEqual([1]);
    expect(kept(applyTopP(logitsOf(...probs), 0.75))).toEqual([1, 3]);
    expect(kept(applyTopP(logitsOf(...probs), 0.85))).toEqual([0, 1, 3]);
    expect(kept(applyTopP(logitsOf(...probs), 0.99))).toEqual([0, 1, 2, 3]);
  });

  it('p = 1 changes nothing', () => {
    expect(Array.from(applyTopP(row(1, 2, -Infinity), 1))).toEqual([1, 2, -Infinity]);
  });

  it('breaks ties by lowest id, and stops once the mass reaches p exactly', () => {
    expect(kept(applyTopP(row(0, 0, 0, 0), 0.5))).toEqual([0, 1]);
    expect(kept(applyTopP(row(0, 0, 0, 0), 0.3))).toEqual([0, 1]);
    expect(kept(applyTopP(row(0, 0, 0, 0), 0.2))).toEqual([0]);
  });

  it('always keeps at least one token', () => {
    expect(kept(applyTopP(row(-Infinity, 3, -Infinity), 0.01))).toEqual([1]);
    expect(kept(applyTopP(row(10, 0, 0), 1e-9))).toEqual([0]);
  });

  it('matches a full sort on large rows, peaked and flat', () => {
    for (const [seed, scale] of [
      [3, 8],
      [4, 1],
      [5, 0.01],
    ]) {
      const logits = randomLogits(seed, 32000, scale);
      for (const p of [0.1, 0.5, 0.9, 0.999]) {
        expect(kept(applyTopP(logits.slice(), p))).toEqual(topPReference(logits, p));
      }
    }
  });

  it('rejects p outside (0, 1]', () => {
    expect(() => applyTopP(row(1), 1.5)).toThrow('topP must be in (0, 1], got 1.5');
    expect(() => applyTopP(row(1), 0)).toThrow('topP must be in (0, 1], got 0');
  });
});

describe('applyMinP', () => {
  it('keeps tokens with probability ≥ minP · p_max', () => {
    const probs = [0.15, 0.5, 0.05, 0.3];
    expect(kept(applyMinP(logitsOf(...probs), 0.5))).toEqual([1, 3]);
    expect(kept(applyMinP(logitsOf(...probs), 0.2))).toEqual([0, 1, 3]);
    expect(kept(applyMinP(logitsOf(...probs), 0.05))).toEqual([0, 1, 2, 3]);
  });

  it('minP = 0 changes nothing; minP = 1 keeps the tied maxima', () => {
    expect(Array.from(applyMinP(row(1, 2, 3), 0))).toEqual([1, 2, 3]);
    expect(kept(applyMinP(row(2, 2, 1), 1))).toEqual([0, 1]);
  });

  it('keeps the only possible token', () => {
    expect(kept(applyMinP(row(-Infinity, -50, -Infinity), 0.9))).toEqual([1]);
  });

  it('rejects minP outside [0, 1]', () => {
    expect(() => applyMinP(row(1), 2)).toThrow('minP must be in [0, 1], got 2; 0 turns it off');
  });
});
