import { CpuBackend } from '@loom/backend-cpu';
import { MambaLM, makeMambaConfig } from '@loom/nn';
import { argmax, assign, type Backend, randn, scope, setBackend, tensor } from '@loom/tensor';
import { webgpuForTests } from '@loom/webgpu-node';
import { describe, expect, it } from 'vitest';
import { type GenerationEvent, RecurrentGenerator, RecurrentSession } from '../src/index';
import { tok512 } from './fixtures';

const gpu = await webgpuForTests();

/** A small MambaLM over tok512's 512 ids on `backend`, with weights large enough that its greedy text varies. */
function mamba(backend: Backend = new CpuBackend()): MambaLM {
  setBackend(backend);
  const model = new MambaLM(
    makeMambaConfig({ vocabSize: 512, dim: 16, numLayers: 2, stateSize: 4, tiedEmbeddings: false }),
    {
      seed: 2,
    },
  );
  for (const [i, p] of model.parameters().entries())
    scope(() => assign(p, randn(p.shape, { seed: 50 + i }).mul(0.4)));
  return model;
}

/** Greedy continuation by running the whole sequence through `forward` for every new token. */
async function greedyByForward(model: MambaLM, prompt: number[], count: number): Promise<number[]> {
  const ids = [...prompt];
  for (let i = 0; i < count; i++) {
    const next = scope(() => {
      const logits = model.forward(tensor(ids, [1, ids.length], { dtype: 'i32' })); // [1, T, V]
      return argmax(logits.slice([0, ids.length - 1, 0], [1, 1, model.vocabSize]).reshape([model.vocabSize]));
    });
    ids.push(await next.item());
    next.dispose();
  }
  return ids.slice(prompt.length);
}

describe('generating from a recurrent model (Mamba)', () => {
  it('streams the greedy tokens of a full forward per step, with a state that does not grow', async () => {
    const model = mamba();
    const generator = new RecurrentGenerator(model, tok512());
    const prompt = generator.encode('Once upon a time');
    const expected = await greedyByForward(model, prompt, 12);
    expect(new Set(expected).size, 'a varied continuation').toBeGreaterThan(3);
    const live = model.backend.liveCount();
    const events: GenerationEvent[] = [];
    for await (const e of generator.generate(prompt, {
      sampling: { temperature: 0 },
      stop: { maxNewTokens: 12, eosTokenIds: [] },
    })) {
      events.push(e);
    }
    const tokens = events.flatMap((e) => (e.type === 'token' ? [e.token] : []));
    expect(tokens).toEqual(expected);
    const done = events.at(-1);
    expect(done?.type === 'done' && done.stats.stopReason).toBe('max-tokens');
    expect(done?.type === 'done' && done.stats.text).toBe(tok512().decode(expected));
    expect(model.backend.liveCount(), 'the state is freed when the stream ends').toBe(live);
    model.dispose();
  });

  it('keeps the state size fixed, and truncating re-runs the kept tokens', async () => {
    const model = mamba();
    const session = new RecurrentSession(model);
    const bytes = session.state.bytes;
    const first = session.feed([1, 2, 3, 4, 5]);
    const firstValues = await first.data();
    first.dispose();
    for (let i = 0; i < 20; i++) session.feed([(7 * i) % 512]).dispose();
    expect(session.state.bytes).toBe(bytes);
    expect(session.tokens.length).toBe(25);
    session.truncate(4);
    const again = session.feed([5]);
    expect(Array.from(await again.data())).toEqual(Array.from(firstValues).map((v) => expect.closeTo(v, 4)));
    again.dispose();
    expect(() => session.feed([512])).toThrow(/ids must be integers in \[0, 512\)/);
    expect(() => new RecurrentSession(model, { capacity: 0 })).toThrow(/capacity must be an integer/);
    session.dispose();
    model.dispose();
  });

  it.skipIf(!gpu)('generates the same greedy text on WebGPU as on the CPU', async () => {
    if (!gpu) return;
    const texts: string[] = [];
    for (const backend of [new CpuBackend(), gpu]) {
      const model = mamba(backend);
      const generator = new RecurrentGenerator(model, tok512());
      let text = '';
      for await (const e of generator.generate('Once upon a time', {
        sampling: { temperature: 0 },
        stop: { maxNewTokens: 10, eosTokenIds: [] },
      })) {
        if (e.type === 'done') text = e.stats.text;
      }
      texts.push(text);
      model.dispose();
    }
    expect(texts[1]).toBe(texts[0]);
    expect(texts[0].length).toBeGreaterThan(0);
  });
});
