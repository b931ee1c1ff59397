import { describe, expect, it } from 'vitest';
import { keep, scope, track } from '../src/scope';

class Handle {
  disposed = 0;
  constructor() {
    track(this);
  }
  dispose(): void {
    this.disposed++;
  }
}

describe('scope', () => {
  it('disposes what it made except returned and kept values, which move to the outer scope', () => {
    let temp: Handle | undefined;
    let kept: Handle | undefined;
    let innerResult: Handle | undefined;
    const outer = scope(() => {
      innerResult = scope(() => {
        temp = new Handle();
        kept = keep(new Handle());
        return new Handle();
      });
      return { nested: [innerResult] };
    });
    expect(temp?.disposed).toBe(1);
    expect(kept?.disposed).toBe(0);
    expect(innerResult?.disposed).toBe(0);
    expect(outer.nested[0]).toBe(innerResult);
  });

  it('refuses async functions before running them', () => {
    let ran = false;
    expect(() =>
      scope(async () => {
        ran = true;
      }),
    ).toThrow(/async function/);
    expect(ran).toBe(false);
  });
});
