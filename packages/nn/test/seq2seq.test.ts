import { AutodiffBackend, gradcheck, valueAndGrad } from '@loom/autograd';
import { CpuBackend } from '@loom/backend-cpu';
import { assign, concat, scope, setBackend, softmaxCrossEntropy, type Tensor, tensor } from '@loom/tensor';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  AdamW,
  beamSearch,
  beamSearchWith,
  disposeBatch,
  EncoderDecoder,
  exactMatch,
  greedyDecode,
  makeSeq2SeqConfig,
  type NextTokenLogProbs,
  type Seq2SeqConfig,
  type Seq2SeqPair,
  seq2seqBatch,
  sequenceLogProb,
  ToyTask,
  teacherForcing,
} from '../src/index';
import { TestCache } from './test-cache';

const special = { pad: 0, bos: 1, eos: 2 };

function tinyConfig(preset: 'llama' | 'gpt2', vocabSize = 9): Seq2SeqConfig {
  return makeSeq2SeqConfig(preset, {
    vocabSize,
    dim: 16,
    numLayers: 2,
    encoderLayers: 2,
    numHeads: 4,
    numKvHeads: 2,
    maxSeqLen: 12,
  });
}

/** A deterministic stream of uniform draws in [0, 1). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Random ids in [3, vocab). */
function randomIds(draw: () => number, length: number, vocab: number): number[] {
  return Array.from({ length }, () => 3 + Math.floor(draw() * (vocab - 3)));
}

async function rows(t: Tensor): Promise<Float32Array> {
  const data = await t.float32Data();
  t.dispose();
  return data;
}

describe('EncoderDecoder', () => {
  beforeAll(() => setBackend(new AutodiffBackend(new CpuBackend())));

  it('names encoder, decoder and cross-attention parameters', () => {
    const model = new EncoderDecoder(tinyConfig('llama'));
    const names = model.namedParameters().map(([n]) => n);
    expect(names).toContain('encoder.layers.1.attention.wq.weight');
    expect(names).toContain('encoder.norm.weight');
    expect(names).toContain('decoder.layers.0.cross_attention.wk.weight');
    expect(names).toContain('decoder.layers.1.cross_norm.weight');
    expect(names).toContain('output.weight');
    expect(new Set(names).size).toBe(names.length);
    model.dispose();
    expect(() => makeSeq2SeqConfig('llama', { ...tinyConfig('llama'), encoderLayers: 0 })).toThrow(
      /encoderLayers/,
    );
  });

  it('teacher forcing shifts targets, appends EOS and ignores padding', async () => {
    const { inputs, labels } = teacherForcing([[5, 6, 7], [8]], special);
    expect(inputs.shape).toEqual([2, 4]);
    expect(Array.from(await inputs.data())).toEqual([1, 5, 6, 7, 1, 8, 0, 0]);
    expect(Array.from(await labels.data())).toEqual([5, 6, 7, 2, 8, 2, -100, -100]);
    inputs.dispose();
    labels.dispose();
    expect(() => teacherForcing([[5, 2]], special)).toThrow(/without EOS/);
  });

  for (const preset of ['llama', 'gpt2'] as const) {
    it(`${preset}: a padded batch gives each row the logits and loss it has alone`, async () => {
      const model = new EncoderDecoder(tinyConfig(preset), { seed: 3 });
      const pairs: Seq2SeqPair[] = [
        { source: [3, 4, 5, 6, 7], target: [8, 7, 6] },
        { source: [4, 8], target: [5, 5, 3, 4, 6] },
      ];
      const batch = seq2seqBatch(pairs, special);
      const together = await rows(model.forward(batch.source.ids, batch.inputs, batch.source.lengths)); // [2, 6, V]
      const v = model.config.vocabSize;
      const t = batch.inputs.shape[1];
      let nll = 0;
      let count = 0;
      for (const [b, pair] of pairs.entries()) {
        const one = seq2seqBatch([pair], special);
        const alone = await rows(model.forward(one.source.ids, one.inputs)); // [1, T_b, V]
        const tb = one.inputs.shape[1];
        for (let i = 0; i < tb * v; i++) expect(together[b * t * v + i]).toBeCloseTo(alone[i], 5);
        nll -= (await sequenceLogProb(model, pair.source, pair.target, special)) * 1;
        count += pair.target.length + 1;
        disposeBatch(one);
      }
      const loss = model.loss(batch);
      expect(await loss.item()).toBeCloseTo(nll / count, 5);
      loss.dispose();
      disposeBatch(batch);
      model.dispose();
    });
  }

  for (const preset of ['llama', 'gpt2'] as const) {
    it(`${preset}: cached decoding projects the source once and equals full recomputation`, async () => {
      const config = tinyConfig(preset);
      const model = new EncoderDecoder(config, { seed: 11 });
      const draw = lcg(5);
      const sources = [randomIds(draw, 6, config.vocabSize), randomIds(draw, 4, config.vocabSize)];
      const spies = model.decoderLayers.flatMap((l) => [
        vi.spyOn(l.crossAttention.wk, 'forward'),
        vi.spyOn(l.crossAttention.wv, 'forward'),
      ]);
      const cache = new TestCache(config, sources.length);
      const maxLength = 9;
      const cached = await greedyDecode(model, sources, { special, maxLength, selfCache: cache });
      for (const spy of spies) expect(spy).toHaveBeenCalledTimes(1);
      const beams = await beamSearch(model, sources[0], { special, beamWidth: 3, maxLength });
      expect(beams.length).toBe(3);
      for (const spy of spies) expect(spy).toHaveBeenCalledTimes(2);
      for (const spy of spies) spy.mockRestore();
      cache.dispose();

      const uncached = await greedyDecode(model, sources, { special, maxLength });
      expect(cached.map((h) => h.tokens)).toEqual(uncached.map((h) => h.tokens));
      for (const [i, h] of cached.entries()) expect(h.logProb).toBeCloseTo(uncached[i].logProb, 4);

      // Step by step: the cached step's logits against the whole prefix recomputed without any cache.
      const prefix = [special.bos, ...cached[0].tokens].slice(0, maxLength);
      const cross = model.sourceCache([sources[0]], special.pad);
      const step = new TestCache(config, 1);
      const full = await rows(
        model.decode(tensor(Int32Array.from(prefix), [1, prefix.length], { dtype: 'i32' }), cross),
      );
      const v = config.vocabSize;
      for (const [i, id] of prefix.entries()) {
        const one = tensor(Int32Array.from([id]), [1, 1], { dtype: 'i32' });
        const logits = await rows(model.decode(one, cross, { offset: i, cache: step }));
        one.dispose();
        for (let j = 0; j < v; j++) expect(Math.abs(logits[j] - full[i * v + j])).toBeLessThan(1e-4);
      }
      step.dispose();
      cross.dispose();
      model.dispose();
    });
  }

  it('beam width 1 equals greedy; beam scores are the exact sum of log-probabilities', async () => {
    const config = tinyConfig('llama');
    const model = new EncoderDecoder(config, { seed: 21 });
    const draw = lcg(9);
    for (let n = 0; n < 3; n++) {
      const source = randomIds(draw, 3 + n, config.vocabSize);
      const [greedy] = await greedyDecode(model, [source], { special, maxLength: 8 });
      const [beam] = await beamSearch(model, source, { special, beamWidth: 1, maxLength: 8 });
      expect(beam.tokens).toEqual(greedy.tokens);
      expect(beam.logProb).toBeCloseTo(greedy.logProb, 4);
      const beams = await beamSearch(model, source, {
        special,
        beamWidth: 4,
        maxLength: 8,
        lengthPenalty: 0.6,
      });
      for (const h of beams) {
        const reference = await sequenceLogProb(model, source, h.tokens, special, h.ended);
        expect(Math.abs(h.logProb - reference)).toBeLessThan(1e-4);
        expect(h.score).toBeCloseTo(h.logProb / (h.tokens.length + (h.ended ? 1 : 0)) ** 0.6, 10);
      }
      for (let i = 1; i < beams.length; i++)
        expect(beams[i - 1].score).toBeGreaterThanOrEqual(beams[i].score);
      expect(beams[0].logProb).toBeGreaterThanOrEqual(greedy.logProb - 1e-9);
    }
    model.dispose();
  });

  it('beam search finds a likelier sequence than greedy where the greedy first step is a trap', async () => {
    // Tokens: 0 pad, 1 bos, 2 eos, 3 'a', 4 'b'. After BOS: a 0.55, b 0.45. After 'a' every token is equally
    // likely (0.2); after 'b' EOS has 0.9. Greedy takes 'a' (best 0.55·0.2 = 0.11); beam 2 finds b EOS (0.405).
    const probs = (prefix: readonly number[]): number[] => {
      if (prefix.length === 1) return [0, 0, 0, 0.55, 0.45];
      if (prefix[1] === 3) return [0.2, 0.2, 0.2, 0.2, 0.2];
      return [0.025, 0.025, 0.9, 0.025, 0.025];
    };
    const next: NextTokenLogProbs = async (prefixes) =>
      prefixes.map((p) =>
        Float64Array.from(probs(p), (q) => (q > 0 ? Math.log(q) : Number.NEGATIVE_INFINITY)),
      );
    const [greedy] = await beamSearchWith(next, { special, beamWidth: 1, maxLength: 2 });
    const beams = await beamSearchWith(next, { special, beamWidth: 2, maxLength: 2 });
    expect(greedy.tokens[0]).toBe(3);
    expect(beams[0].tokens).toEqual([4]);
    expect(beams[0].ended).toBe(true);
    expect(beams[0].logProb).toBe(Math.log(0.45) + Math.log(0.9));
    expect(beams[0].logProb).toBeGreaterThan(greedy.logProb);
    await expect(beamSearchWith(next, { special, beamWidth: 0, maxLength: 2 })).rejects.toThrow(/beamWidth/);
  });

  it('learns to reverse short strings well above the copy baseline', async () => {
    const task = new ToyTask({ task: 'reverse', alphabet: 4, minLength: 2, maxLength: 5 });
    const config = makeSeq2SeqConfig('gpt2', {
      vocabSize: task.vocabSize,
      dim: 32,
      numLayers: 1,
      encoderLayers: 1,
      numHeads: 2,
      maxSeqLen: 8,
    });
    const model = new EncoderDecoder(config, { seed: 2 });
    const draw = lcg(17);
    const heldOut = Array.from({ length: 64 }, () => task.pair(draw));
    const held = new Set(heldOut.map((p) => task.key(p.source)));
    const params = model.parameters();
    const opt = new AdamW({ weightDecay: 0 });
    for (let step = 0; step < 150; step++) {
      const pairs: Seq2SeqPair[] = [];
      while (pairs.length < 32) {
        const p = task.pair(draw);
        if (!held.has(task.key(p.source))) pairs.push(p);
      }
      const batch = seq2seqBatch(pairs, task.special);
      const { value, grads } = valueAndGrad(() => model.loss(batch), params);
      opt.step(params, grads, 3e-3);
      for (const t of [value, ...grads]) t.dispose();
      disposeBatch(batch);
    }
    const result = await exactMatch(model, heldOut, {
      special: task.special,
      newSelfCache: (b) => new TestCache(config, b),
    });
    const copies = heldOut.filter((p) => task.key(p.source) === task.key(p.target)).length;
    expect(result.correct / result.total).toBeGreaterThan(Math.max(0.6, (2 * copies) / heldOut.length));
    opt.dispose();
    model.dispose();
  });
});

describe('EncoderDecoder gradients (float64)', () => {
  beforeAll(() => setBackend(new AutodiffBackend(new CpuBackend({ precision: 'f64' }))));
  afterAll(() => setBackend(new AutodiffBackend(new CpuBackend())));

  it('gradcheck through encoder, cross-attention and decoder', async () => {
    const config = makeSeq2SeqConfig('llama', {
      vocabSize: 7,
      dim: 8,
      numLayers: 1,
      encoderLayers: 1,
      numHeads: 2,
      numKvHeads: 1,
      maxSeqLen: 6,
    });
    const model = new EncoderDecoder(config, { seed: 4 });
    const draw = lcg(3);
    const src = tensor(
      Float64Array.from({ length: 2 * 4 * 8 }, () => draw() - 0.5),
      [2, 4, 8],
    ); // [B, S, dim]
    const tgt = tensor(
      Float64Array.from({ length: 2 * 3 * 8 }, () => draw() - 0.5),
      [2, 3, 8],
    ); // [B, T, dim]
    const labels = tensor(Int32Array.from([3, 4, 2, 5, 2, -100]), [6], { dtype: 'i32' });
    const lengths = [4, 2];
    const loss = ([x, y]: Tensor[]) => {
      const cross = model.crossCache(model.encodeEmbedded(x, lengths), lengths);
      try {
        const logits = model.project(model.decodeEmbedded(y, cross)).reshape([6, 7]); // [B·T, V]
        return softmaxCrossEntropy(logits, labels, -100);
      } finally {
        cross.dispose();
      }
    };
    const result = await gradcheck(loss, [src, tgt], { eps: 1e-6, atol: 1e-7, rtol: 1e-5 });
    expect(result.ok, result.message).toBe(true);
    expect(result.checked).toBe(2 * 4 * 8 + 2 * 3 * 8);

    // Parameter gradients (cross-attention keys/values feed the encoder's): central differences per element.
    const params = model.namedParameters();
    const { value, grads } = valueAndGrad(
      () => loss([src, tgt]),
      params.map(([, p]) => p),
    );
    value.dispose();
    const at = async () => {
      const out = scope(() => loss([src, tgt]));
      const v = await out.item();
      out.dispose();
      return v;
    };
    let compared = 0;
    for (const [i, [name, p]] of params.entries()) {
      const base = await p.data();
      const analytic = await grads[i].data();
      for (const j of [0, Math.floor(base.length / 2), base.length - 1]) {
        const moved = (delta: number) => {
          const values = Float64Array.from(base);
          values[j] += delta;
          const t = tensor(values, p.shape);
          assign(p, t);
          t.dispose();
        };
        moved(1e-6);
        const plus = await at();
        moved(-1e-6);
        const minus = await at();
        moved(0);
        const numeric = (plus - minus) / 2e-6;
        expect(Math.abs(analytic[j] - numeric), `${name}[${j}]`).toBeLessThan(
          1e-7 + 1e-5 * Math.abs(numeric),
        );
        compared++;
      }
    }
    expect(compared).toBe(3 * params.length);
    for (const g of grads) g.dispose();
    for (const t of [src, tgt, labels]) t.dispose();
    model.dispose();
  });
});

describe('CrossKVCache.repeat', () => {
  beforeAll(() => setBackend(new AutodiffBackend(new CpuBackend())));

  it('repeats each source row in place, with its key length', async () => {
    const model = new EncoderDecoder(tinyConfig('gpt2'), { seed: 8 });
    const cross = model.sourceCache(
      [
        [3, 4, 5],
        [6, 7],
      ],
      special.pad,
    );
    const twice = cross.repeat(2);
    const k = cross.layer(1).k;
    const [, s, h, hd] = k.shape;
    const row = (b: number) => k.slice([b, 0, 0, 0], [1, s, h, hd]);
    const expected = concat([row(0), row(0), row(1), row(1)], 0);
    expect(Array.from(await twice.layer(1).k.data())).toEqual(Array.from(await expected.data()));
    expect(twice.layer(1).keyLengths).toEqual([3, 3, 2, 2]);
    expect(() => cross.layer(2)).toThrow(/layer 2/);
    for (const c of [cross, twice]) c.dispose();
    expected.dispose();
    model.dispose();
  });
});
