import { AutodiffBackend, valueAndGrad } from '@loom/autograd';
import { CpuBackend } from '@loom/backend-cpu';
import { assign, getBackend, scope, setBackend, type Tensor, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AdamW,
  applyLora,
  type Lora,
  loraParameterCount,
  makeConfig,
  type Preset,
  TransformerLM,
} from '../src/index';

function tinyModel(preset: Preset, seed = 7): TransformerLM {
  const config = makeConfig(preset, { vocabSize: 13, dim: 16, numLayers: 2, numHeads: 4, maxSeqLen: 16 });
  return new TransformerLM(config, { seed });
}

const tokens = () =>
  tensor(Int32Array.from([1, 5, 2, 7, 3, 9, 4, 11, 0, 6, 8, 12]), [2, 6], { dtype: 'i32' });
const targets = () =>
  tensor(Int32Array.from([5, 2, 7, 3, 9, 4, 11, 0, 6, 8, 12, 1]), [2, 6], { dtype: 'i32' });

async function logitsOf(model: TransformerLM): Promise<Float32Array> {
  const x = tokens();
  const out = model.forward(x);
  const data = await out.float32Data();
  for (const t of [x, out]) t.dispose();
  return data;
}

async function snapshot(model: TransformerLM): Promise<Float32Array[]> {
  return Promise.all(model.parameters().map((p) => p.float32Data()));
}

/** Fills every B with seeded values so the adapters change the output. */
function randomiseB(lora: Lora): void {
  let s = 1;
  for (const adapter of lora.adapters) {
    for (const b of adapter.b) {
      const values = Float32Array.from({ length: b.size }, () => {
        s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0;
        return (s / 2 ** 32 - 0.5) * 0.2;
      });
      const t = tensor(values, b.shape);
      assign(b, t);
      t.dispose();
    }
  }
}

function maxDiff(a: Float32Array, b: Float32Array): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

describe('LoRA', () => {
  beforeAll(() => setBackend(new AutodiffBackend(new CpuBackend())));

  it('puts adapters on the PEFT modules named, A Kaiming-uniform and B zero, and starts equal to the base', async () => {
    for (const [preset, targetsList] of [
      ['llama', ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj']],
      ['gpt2', ['c_attn', 'c_proj', 'c_fc']],
    ] as const) {
      const model = tinyModel(preset);
      const before = await logitsOf(model);
      const lora = applyLora(model, { rank: 4, alpha: 8, targets: targetsList });
      expect(lora.adapters.map((a) => a.site.path).slice(0, 4)).toEqual(
        preset === 'llama'
          ? [
              'model.layers.0.self_attn.q_proj',
              'model.layers.0.self_attn.k_proj',
              'model.layers.0.self_attn.v_proj',
              'model.layers.0.self_attn.o_proj',
            ]
          : [
              'transformer.h.0.attn.c_attn',
              'transformer.h.0.attn.c_proj',
              'transformer.h.0.mlp.c_fc',
              'transformer.h.0.mlp.c_proj',
            ],
      );
      expect(lora.trainableCount).toBe(loraParameterCount(model.config, 4, targetsList));
      const a = await lora.adapters[0].a.float32Data();
      const bound = 1 / Math.sqrt(16);
      expect(a.every((v) => Math.abs(v) <= bound)).toBe(true);
      expect(Math.max(...a) - Math.min(...a)).toBeGreaterThan(bound);
      for (const b of lora.adapters[0].b) expect((await b.float32Data()).every((v) => v === 0)).toBe(true);
      expect(lora.adapters[0].scale).toBe(2);
      expect(await logitsOf(model)).toEqual(before);
      lora.dispose();
      model.dispose();
    }
  });

  it('merged and unmerged models give the same logits, and unmerging restores the weights', async () => {
    for (const preset of ['llama', 'gpt2'] as const) {
      const model = tinyModel(preset).eval();
      const base = await snapshot(model);
      const lora = applyLora(model, {
        rank: 3,
        alpha: 6,
        targets: preset === 'llama' ? ['q_proj', 'v_proj', 'down_proj'] : ['c_attn', 'c_proj'],
      });
      randomiseB(lora);
      const unmerged = await logitsOf(model);
      const baseLogits = await (async () => {
        lora.merge();
        lora.unmerge();
        return snapshot(model);
      })();
      lora.merge();
      expect(lora.merged).toBe(true);
      const merged = await logitsOf(model);
      expect(maxDiff(merged, unmerged)).toBeLessThan(1e-5);
      lora.unmerge();
      const after = await snapshot(model);
      for (const [i, w] of after.entries()) expect(maxDiff(w, base[i])).toBeLessThan(1e-6);
      for (const [i, w] of baseLogits.entries()) expect(maxDiff(w, base[i])).toBeLessThan(1e-6);
      expect(maxDiff(await logitsOf(model), unmerged)).toBeLessThan(1e-5);
      lora.dispose();
      model.dispose();
    }
  });

  it('the adapters change the output once B is non-zero', async () => {
    const model = tinyModel('llama').eval();
    const before = await logitsOf(model);
    const lora = applyLora(model, { rank: 2, targets: ['v_proj'] });
    randomiseB(lora);
    expect(maxDiff(await logitsOf(model), before)).toBeGreaterThan(1e-4);
    lora.dispose();
    expect(await logitsOf(model)).toEqual(before);
    model.dispose();
  });

  it('records no op for the frozen base before the first adapter, and AdamW keeps state for the adapters only', () => {
    const model = tinyModel('llama');
    const x = tokens();
    const y = targets();
    const backend = getBackend() as AutodiffBackend;
    const recorded = (params: readonly Tensor[]): { ops: string[]; grads: number } => {
      let ops: string[] = [];
      const { value, grads } = valueAndGrad(() => {
        const loss = model.loss(x, y);
        ops = backend.tape?.nodes.map((node) => node.op) ?? [];
        return loss;
      }, params);
      const count = grads.length;
      for (const t of [value, ...grads]) t.dispose();
      return { ops, grads: count };
    };
    const full = recorded(model.parameters());
    const lora = applyLora(model, { rank: 2, targets: ['v_proj'] });
    const adapted = recorded(lora.parameters());
    expect(adapted.grads).toBe(lora.parameters().length);
    // The embedding and first norm, q and k of layer 0 depend on no trainable tensor: nothing of them is taped,
    // and layer 0's attention is preceded only by the v adapter's own ops (x Aᵀ, times Bᵀ, the scale, the add).
    const beforeAttention = (ops: string[]) => ops.slice(0, ops.indexOf('attention'));
    expect(beforeAttention(full.ops)).toContain('gather');
    expect(beforeAttention(adapted.ops)).toEqual(['matmul', 'matmul', 'mul', 'add']);

    const optimizerBytes = (params: readonly Tensor[]): number => {
      const optimizer = new AdamW();
      const grads = params.map((p) => scope(() => p.mul(0)));
      const live = getBackend().liveBytes();
      optimizer.step(params, grads, 1e-3);
      const grown = getBackend().liveBytes() - live;
      const stateValues = [...optimizer.state().values()].reduce((n, t) => n + t.size, 0);
      expect(stateValues).toBe(2 * params.reduce((n, p) => n + p.size, 0));
      for (const g of grads) g.dispose();
      optimizer.dispose();
      return grown;
    };
    const loraBytes = optimizerBytes(lora.parameters());
    expect(loraBytes).toBe(2 * 4 * lora.trainableCount);
    lora.dispose();
    for (const t of [x, y]) t.dispose();
    model.dispose();
  });

  it('a short fine-tune lowers the loss on its data while the base weights stay bit-identical', async () => {
    const model = tinyModel('gpt2');
    const base = await snapshot(model);
    const lora = applyLora(model, { rank: 4, alpha: 8, dropout: 0.1, targets: ['c_attn', 'c_fc'], seed: 3 });
    const params = lora.parameters();
    const optimizer = new AdamW({ weightDecay: 0 });
    const x = tokens();
    const y = targets();
    const evalLoss = async () => {
      model.eval();
      const l = model.loss(x, y);
      const v = await l.item();
      l.dispose();
      model.train();
      return v;
    };
    const first = await evalLoss();
    for (let step = 0; step < 30; step++) {
      const { value, grads } = valueAndGrad(() => model.loss(x, y), params);
      optimizer.step(params, grads, 1e-2);
      for (const t of [value, ...grads]) t.dispose();
    }
    const last = await evalLoss();
    expect(last).toBeLessThan(first - 0.1);
    const after = await snapshot(model);
    for (const [i, w] of after.entries()) expect(w).toEqual(base[i]);
    optimizer.dispose();
    lora.dispose();
    for (const t of [x, y]) t.dispose();
    model.dispose();
  });

  it('applies dropout on the adapter input only while training, from seeded masks', async () => {
    const run = async (training: boolean, seed: number) => {
      const model = tinyModel('llama');
      model.train(training);
      const lora = applyLora(model, { rank: 2, dropout: 0.5, targets: ['q_proj', 'v_proj'], seed });
      randomiseB(lora);
      const out = await logitsOf(model);
      lora.dispose();
      model.dispose();
      return out;
    };
    expect(await run(false, 1)).toEqual(await run(false, 1));
    expect(await run(true, 1)).toEqual(await run(true, 1));
    expect(maxDiff(await run(true, 1), await run(false, 1))).toBeGreaterThan(1e-5);
  });

  it('refuses unknown targets, bad ranks and a second set of adapters, naming them', () => {
    const model = tinyModel('llama');
    expect(() => applyLora(model, { rank: 2, targets: ['c_attn'] })).toThrow(
      /c_attn is not a llama module name/,
    );
    expect(() => applyLora(model, { rank: 0 })).toThrow(/rank must be a positive integer/);
    expect(() => applyLora(model, { rank: 17 })).toThrow(/rank 17 exceeds/);
    expect(() => applyLora(model, { rank: 2, targets: ['q_proj', 'q_proj'] })).toThrow(/given twice/);
    const lora = applyLora(model, { rank: 2 });
    expect(() => applyLora(model, { rank: 2 })).toThrow(/already has adapters/);
    lora.dispose();
    model.dispose();
  });
});

describe('LoRA gradients (float64)', () => {
  beforeAll(() => setBackend(new AutodiffBackend(new CpuBackend({ precision: 'f64' }))));

  it('match central finite differences for A and B', async () => {
    const model = tinyModel('llama').eval();
    const lora = applyLora(model, { rank: 2, alpha: 4, targets: ['k_proj', 'up_proj'] });
    randomiseB(lora);
    const x = tokens();
    const y = targets();
    const params = lora.parameters();
    const { value, grads } = valueAndGrad(() => model.loss(x, y), params);
    const analytic = await Promise.all(grads.map((g) => g.data()));
    for (const t of [value, ...grads]) t.dispose();
    const lossAt = async () => {
      const l = model.loss(x, y);
      const v = await l.item();
      l.dispose();
      return v;
    };
    const eps = 1e-6;
    let checked = 0;
    for (const [k, p] of params.entries()) {
      const original = await p.data();
      for (const j of [0, Math.floor(p.size / 2), p.size - 1]) {
        const at = async (delta: number) => {
          const moved = original.slice();
          moved[j] += delta;
          const t = tensor(moved, p.shape);
          assign(p, t);
          t.dispose();
          return lossAt();
        };
        const numeric = ((await at(eps)) - (await at(-eps))) / (2 * eps);
        const restore = tensor(original, p.shape);
        assign(p, restore);
        restore.dispose();
        expect(Math.abs(analytic[k][j] - numeric)).toBeLessThan(1e-6 + 1e-5 * Math.abs(numeric));
        checked++;
      }
    }
    expect(checked).toBe(3 * params.length);
    for (const t of [x, y]) t.dispose();
    lora.dispose();
    model.dispose();
  });
});
