import { AutodiffBackend, gradcheck, valueAndGrad } from '@loom/autograd';
import { CpuBackend } from '@loom/backend-cpu';
import { assign, keep, scope, setBackend, softmaxCrossEntropy, type Tensor, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AdamW,
  makeConfig,
  maskTokens,
  type Preset,
  SPECIAL_TOKEN_COUNT,
  specialTokensAfter,
  TransformerEncoder,
  TransformerLM,
} from '../src/index';

function tinyConfig(preset: Preset, vocabSize = 9) {
  return makeConfig(preset, { vocabSize, dim: 16, numLayers: 2, numHeads: 4, maxSeqLen: 12 });
}

describe('TransformerEncoder', () => {
  beforeAll(() => setBackend(new AutodiffBackend(new CpuBackend())));

  it("names its parameters as TransformerLM's, plus the classifier", () => {
    for (const preset of ['llama', 'gpt2'] as const) {
      const config = tinyConfig(preset);
      const encoder = new TransformerEncoder(config, { numClasses: 3 });
      const decoder = new TransformerLM(config);
      const names = encoder.namedParameters().map(([n]) => n);
      const body = names.filter((n) => !n.startsWith('classifier.'));
      expect(body).toEqual(decoder.namedParameters().map(([n]) => n));
      expect(names.filter((n) => n.startsWith('classifier.'))).toEqual([
        'classifier.weight',
        'classifier.bias',
      ]);
      encoder.dispose();
      decoder.dispose();
    }
  });

  for (const preset of ['llama', 'gpt2'] as const) {
    it(`${preset}: attends both ways — a later token changes an earlier position's output`, async () => {
      const encoder = new TransformerEncoder(tinyConfig(preset), { seed: 3 });
      const a = encoder.hidden(tensor([1, 2, 3, 4], [1, 4], { dtype: 'i32' }));
      const b = encoder.hidden(tensor([1, 2, 3, 5], [1, 4], { dtype: 'i32' }));
      const first = async (h: Tensor) => (await h.data()).slice(0, 16);
      const [fa, fb] = [await first(a), await first(b)];
      const change = Math.max(...fa.map((x, i) => Math.abs(x - fb[i])));
      expect(change, 'position 0 depends on position 3').toBeGreaterThan(1e-4);
      for (const t of [a, b]) t.dispose();
      encoder.dispose();
    });

    it(`${preset}: right padding hidden by lengths leaves the real tokens' outputs as in an unpadded row`, async () => {
      const encoder = new TransformerEncoder(tinyConfig(preset), { seed: 4 });
      const alone = encoder.hidden(tensor([6, 1, 2], [1, 3], { dtype: 'i32' })); // [1, 3, 16]
      const padded = encoder.hidden(tensor([6, 1, 2, 0, 0, 7, 3, 4, 5, 8], [2, 5], { dtype: 'i32' }), [3, 5]);
      const want = await alone.data();
      const got = (await padded.data()).slice(0, 3 * 16);
      for (let i = 0; i < want.length; i++) expect(got[i]).toBeCloseTo(want[i], 5);
      const unmasked = encoder.hidden(tensor([6, 1, 2, 0, 0], [1, 5], { dtype: 'i32' }));
      const leak = (await unmasked.data()).slice(0, 3 * 16);
      expect(
        Math.max(...leak.map((x, i) => Math.abs(x - want[i]))),
        'without lengths the pads are seen',
      ).toBeGreaterThan(1e-4);
      for (const t of [alone, padded, unmasked]) t.dispose();
      encoder.dispose();
    });
  }

  it('refuses lengths that do not fit the batch, and classifying without a head', () => {
    const encoder = new TransformerEncoder(tinyConfig('gpt2'));
    const tokens = tensor([1, 2, 3, 4], [2, 2], { dtype: 'i32' });
    expect(() => encoder.hidden(tokens, [2])).toThrow(/one entry per batch row \(2\), got 1/);
    expect(() => encoder.hidden(tokens, [2, 3])).toThrow(/lengths\[1\] = 3 must be an integer in 1\.\.2/);
    expect(() => encoder.classifierLogits(tokens)).toThrow(
      /no classification head; build it with numClasses/,
    );
    expect(() => new TransformerEncoder(tinyConfig('gpt2'), { numClasses: 1 })).toThrow(/numClasses/);
    tokens.dispose();
    encoder.dispose();
  });

  it('learns a generated rule (more a than b?) to > 95% held-out accuracy, on padded batches', async () => {
    // ids: a=0, b=1, c=2, then pad, [CLS], [MASK].
    const special = specialTokensAfter(3);
    const config = makeConfig('gpt2', {
      vocabSize: 3 + SPECIAL_TOKEN_COUNT,
      dim: 32,
      numLayers: 2,
      numHeads: 4,
      maxSeqLen: 13,
    });
    const encoder = new TransformerEncoder(config, { numClasses: 2, seed: 11 });
    let state = 12345;
    const draw = (n: number) => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return (state >>> 8) % n;
    };
    const batch = (rows: number) => {
      const ids: number[] = [];
      const labels: number[] = [];
      const lengths: number[] = [];
      for (let r = 0; r < rows; r++) {
        const length = 4 + draw(9); // 4..12 letters
        const letters = Array.from({ length }, () => draw(3));
        const count = (x: number) => letters.filter((l) => l === x).length;
        labels.push(count(0) > count(1) ? 1 : 0);
        ids.push(special.cls, ...letters, ...Array<number>(12 - length).fill(special.pad)); // [13]
        lengths.push(length + 1);
      }
      return {
        tokens: tensor(ids, [rows, 13], { dtype: 'i32' }),
        labels: tensor(labels, [rows], { dtype: 'i32' }),
        lengths,
      };
    };
    const params = encoder.parameters();
    const optimizer = new AdamW({ weightDecay: 0 });
    for (let step = 0; step < 250; step++) {
      const { tokens, labels, lengths } = batch(32);
      const { value, grads } = valueAndGrad(() => encoder.classifyLoss(tokens, labels, lengths), params);
      optimizer.step(params, grads, step < 200 ? 3e-3 : 1e-3);
      for (const t of [value, ...grads, tokens, labels]) t.dispose();
    }
    encoder.eval();
    const test = batch(400);
    const logits = await encoder.classifierLogits(test.tokens, test.lengths).data();
    const labels = await test.labels.data();
    let right = 0;
    for (let r = 0; r < 400; r++) if ((logits[2 * r + 1] > logits[2 * r] ? 1 : 0) === labels[r]) right++;
    const share = Array.from(labels).reduce((n, l) => n + l, 0) / 400;
    console.log(
      `held-out accuracy ${(right / 400).toFixed(3)} (majority class ${Math.max(share, 1 - share).toFixed(3)})`,
    );
    expect(right / 400).toBeGreaterThan(0.95);
    optimizer.dispose();
    encoder.dispose();
  }, 60_000);
});

describe('TransformerEncoder gradients (float64)', () => {
  it('match finite differences through padded bidirectional blocks, the MLM and classifier heads', async () => {
    for (const preset of ['llama', 'gpt2'] as const) {
      setBackend(new AutodiffBackend(new CpuBackend({ precision: 'f64' })));
      const config = makeConfig(preset, { vocabSize: 7, dim: 8, numLayers: 2, numHeads: 2, maxSeqLen: 4 });
      const encoder = new TransformerEncoder(config, { numClasses: 3, seed: 9 });
      const x = tensor(
        Array.from({ length: 2 * 4 * 8 }, (_, i) => Math.sin(i * 1.7)),
        [2, 4, 8],
      ); // [B, T, dim] embedded input
      const mlmTargets = tensor([1, -100, 4, -100, 2, 6, -100, -100], [8], { dtype: 'i32' });
      const labels = tensor([2, 0], [2], { dtype: 'i32' });
      const loss = ([input]: Tensor[]) =>
        scope(() => {
          const h = encoder.encode(input, [4, 2]); // [2, 4, 8]; row 1 padded after 2 tokens
          const mlm = softmaxCrossEntropy(encoder.mlmLogits(h).reshape([8, 7]), mlmTargets);
          const classes = encoder.classifier!.forward(encoder.pooled(h)); // [2, 3]
          return mlm.add(softmaxCrossEntropy(classes, labels));
        });
      const result = await gradcheck(loss, [x], { eps: 1e-6, atol: 1e-8, rtol: 1e-6 });
      expect(result.ok, `${preset}: ${result.message}`).toBe(true);
      expect(result.checked).toBe(64);
      for (const t of [x, mlmTargets, labels]) t.dispose();
      encoder.dispose();
    }
  });
});

describe('TransformerEncoder parameter gradients (float64)', () => {
  it('match finite differences for every parameter of a tiny padded encoder with both heads', async () => {
    for (const preset of ['llama', 'gpt2'] as const) {
      setBackend(new AutodiffBackend(new CpuBackend({ precision: 'f64' })));
      const config = makeConfig(preset, {
        vocabSize: 6,
        dim: 4,
        numLayers: 1,
        numHeads: 2,
        maxSeqLen: 3,
        hiddenDim: 8,
      });
      const encoder = new TransformerEncoder(config, { numClasses: 2, seed: 2 });
      const params = encoder.parameters();
      const originals = params.map((p) => keep(p.add(0)));
      const tokens = tensor([1, 2, 3, 4, 5, 0], [2, 3], { dtype: 'i32' });
      const targets = tensor([-100, 3, 1, 2, -100, -100], [2, 3], { dtype: 'i32' });
      const labels = tensor([1, 0], [2], { dtype: 'i32' });
      // gradcheck hands in a moved copy of one parameter at a time: write it into the model, then put the original back.
      const loss = (inputs: Tensor[]) => {
        const moved = inputs.flatMap((t, i) => (t === params[i] ? [] : [i]));
        for (const i of moved) assign(params[i], inputs[i]);
        const value = scope(() =>
          encoder.mlmLoss(tokens, targets, [3, 2]).add(encoder.classifyLoss(tokens, labels, [3, 2])),
        );
        const out = keep(value.add(0));
        value.dispose();
        for (const i of moved) assign(params[i], originals[i]);
        return out;
      };
      const result = await gradcheck(loss, params, { eps: 1e-6, atol: 1e-8, rtol: 1e-6 });
      expect(result.ok, `${preset}: ${result.message}`).toBe(true);
      expect(result.checked).toBe(params.reduce((n, p) => n + p.size, 0));
      for (const t of [...originals, tokens, targets, labels]) t.dispose();
      encoder.dispose();
    }
  }, 60_000);
});

describe('maskTokens', () => {
  const ids = Int32Array.from({ length: 40_000 }, (_, i) => (i % 13 === 0 ? 50 : i % 40));
  const options = { maskId: 51, randomBelow: 40, special: [50], seed: 7 };

  it('selects 15% of the non-special tokens: 80% [MASK], 10% random, 10% kept; targets only there', () => {
    const { inputs, targets, selected } = maskTokens(ids, options);
    const eligible = ids.filter((id) => id !== 50).length;
    let masked = 0;
    let changed = 0;
    let kept = 0;
    for (let i = 0; i < ids.length; i++) {
      if (ids[i] === 50) {
        expect(targets[i]).toBe(-100);
        expect(inputs[i]).toBe(50);
        continue;
      }
      if (targets[i] === -100) {
        expect(inputs[i]).toBe(ids[i]);
        continue;
      }
      expect(targets[i]).toBe(ids[i]);
      if (inputs[i] === 51) masked++;
      else if (inputs[i] === ids[i]) kept++;
      else changed++;
      expect(inputs[i] === 51 || (inputs[i] >= 0 && inputs[i] < 40)).toBe(true);
    }
    expect(masked + kept + changed).toBe(selected);
    expect(selected / eligible).toBeGreaterThan(0.14);
    expect(selected / eligible).toBeLessThan(0.16);
    expect(masked / selected).toBeGreaterThan(0.77);
    expect(masked / selected).toBeLessThan(0.83);
    // A random replacement may draw the original id (1 in 40), so "kept" is a little over 10%.
    expect(changed / selected).toBeGreaterThan(0.08);
    expect(changed / selected).toBeLessThan(0.12);
    expect(kept / selected).toBeGreaterThan(0.08);
    expect(kept / selected).toBeLessThan(0.12);
  });

  it('is a function of its seed', () => {
    const a = maskTokens(ids, options);
    const b = maskTokens(ids, options);
    const c = maskTokens(ids, { ...options, seed: 8 });
    expect(a.inputs).toEqual(b.inputs);
    expect(a.targets).toEqual(b.targets);
    expect(c.targets).not.toEqual(a.targets);
  });

  it('refuses shares out of range', () => {
    expect(() => maskTokens(ids, { ...options, rate: 1.5 })).toThrow(/rate must be in \[0, 1\], got 1.5/);
    expect(() => maskTokens(ids, { ...options, maskShare: 0.95, randomShare: 0.1 })).toThrow(/at most 1/);
    expect(() => maskTokens(ids, { ...options, randomBelow: 0 })).toThrow(/randomBelow/);
  });
});
