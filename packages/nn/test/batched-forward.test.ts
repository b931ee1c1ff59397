import { CpuBackend } from '@loom/backend-cpu';
import {
  assign,
  getBackend,
  keep,
  randn,
  scope,
  setBackend,
  type Tensor,
  tensor,
  writeSlice,
  zeros,
} from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  forwardBatch,
  headDim,
  type KVStore,
  makeConfig,
  type SharedKVStorage,
  type SlotKVStore,
  type TransformerConfig,
  TransformerLM,
} from '../src/index';
import { TestCache } from './test-cache';

/** Keys and values of `slots` sequences in one storage per layer, [slots, maxSeqLen, Hkv, hd]. */
class TestSlots implements SharedKVStorage {
  readonly #keys: Tensor[];
  readonly #values: Tensor[];

  constructor(config: TransformerConfig, slots: number) {
    const shape = [slots, config.maxSeqLen, config.numKvHeads, headDim(config)];
    this.#keys = Array.from({ length: config.numLayers }, () => keep(zeros(shape)));
    this.#values = Array.from({ length: config.numLayers }, () => keep(zeros(shape)));
  }

  keys(layer: number): Tensor {
    return this.#keys[layer];
  }

  values(layer: number): Tensor {
    return this.#values[layer];
  }

  dispose(): void {
    for (const t of [...this.#keys, ...this.#values]) t.dispose();
  }
}

/** One sequence's slot of a TestSlots: writes its row; `update` returns copies of its keys so far. */
class TestSlot implements SlotKVStore {
  constructor(
    readonly storage: TestSlots,
    readonly slot: number,
  ) {}

  write(layer: number, k: Tensor, v: Tensor, offset: number): void {
    writeSlice(this.storage.keys(layer), k, [this.slot, offset, 0, 0]);
    writeSlice(this.storage.values(layer), v, [this.slot, offset, 0, 0]);
  }

  update(layer: number, k: Tensor, v: Tensor, offset: number): { k: Tensor; v: Tensor } {
    this.write(layer, k, v, offset);
    const [, , h, d] = k.shape;
    const box = [1, offset + k.shape[1], h, d];
    return {
      k: this.storage.keys(layer).slice([this.slot, 0, 0, 0], box),
      v: this.storage.values(layer).slice([this.slot, 0, 0, 0], box),
    };
  }
}

/** A sequence decoded alone: the logits [vocab] of its last new token, through the model's own forward. */
async function alone(
  model: TransformerLM,
  tokens: number[],
  offset: number,
  cache: KVStore,
): Promise<Float32Array> {
  const ids = tensor(Int32Array.from(tokens), [1, tokens.length]); // [1, T]
  const logits = model.forward(ids, { offset, cache }); // [1, T, vocab]
  const { vocabSize } = model.config;
  const last = logits.slice([0, tokens.length - 1, 0], [1, 1, vocabSize]);
  const row = await last.float32Data();
  for (const t of [ids, logits, last]) t.dispose();
  return row;
}

function expectClose(actual: Float32Array, expected: Float32Array): void {
  expect(actual.length).toBe(expected.length);
  let worst = 0;
  for (let i = 0; i < actual.length; i++) worst = Math.max(worst, Math.abs(actual[i] - expected[i]));
  expect(worst).toBeLessThan(1e-5);
}

describe('forwardBatch', () => {
  beforeAll(() => setBackend(new CpuBackend()));

  const cases = [
    { name: 'llama', preset: 'llama', extra: {} },
    { name: 'gpt2', preset: 'gpt2', extra: {} },
    { name: 'qwen2 (q/k/v biases)', preset: 'llama', extra: { qkvBias: true } },
    { name: 'qwen3 (q/k norms, headDim 12)', preset: 'llama', extra: { qkNorm: true, headDim: 12 } },
  ] as const;
  for (const { name, preset, extra } of cases) {
    it(`${name}: each sequence's logits equal those of the sequence decoded alone, at different positions`, async () => {
      const config = makeConfig(preset, {
        vocabSize: 23,
        dim: 32,
        numLayers: 2,
        numHeads: 4,
        numKvHeads: 2,
        maxSeqLen: 24,
        ...extra,
      });
      const model = new TransformerLM(config, { seed: 7 });
      scope(() => {
        // Biases and norm weights off their initial 0 and 1, so that a path that skipped them would differ.
        for (const [name, p] of model.namedParameters()) {
          if (/\.(bias|q_norm\.weight|k_norm\.weight)$/.test(name))
            assign(p, p.add(randn(p.shape, { seed: name.length }).mul(0.3)));
        }
      });
      const live = getBackend().liveCount();
      const prompts = [[1, 5, 9, 2, 7], [3], [4, 8, 15, 16, 22, 11, 6, 10, 12]];
      const batched = prompts.map(() => new TestCache(config));
      const single = prompts.map(() => new TestCache(config));
      // Steps of [sequence, new tokens]: whole prompts, chunks of one, single-token decodes, a late joiner.
      const steps: [number, number[]][][] = [
        [
          [0, prompts[0]],
          [2, prompts[2].slice(0, 4)],
        ],
        [
          [0, [13]],
          [2, prompts[2].slice(4)],
          [1, prompts[1]],
        ],
        [
          [1, [14]],
          [0, [17]],
          [2, [19]],
        ],
        [
          [2, [20]],
          [1, [21, 0]],
        ],
      ];
      const offsets = prompts.map(() => 0);
      for (const step of steps) {
        const logits = forwardBatch(
          model,
          step.map(([s, tokens]) => ({ tokens, offset: offsets[s], cache: batched[s] })),
        ); // [S, vocab]
        expect(logits.shape).toEqual([step.length, config.vocabSize]);
        const rows = await logits.float32Data();
        logits.dispose();
        for (const [row, [s, tokens]] of step.entries()) {
          const expected = await alone(model, tokens, offsets[s], single[s]);
          expectClose(rows.subarray(row * config.vocabSize, (row + 1) * config.vocabSize), expected);
          offsets[s] += tokens.length;
        }
      }
      for (const cache of [...batched, ...single]) cache.dispose();
      expect(getBackend().liveCount()).toBe(live);
      model.dispose();
    });
  }

  it('sequences in the slots of one storage decode together (one attention call) to the logits each gets alone', async () => {
    const config = makeConfig('llama', {
      vocabSize: 23,
      dim: 32,
      numLayers: 2,
      numHeads: 4,
      numKvHeads: 2,
      maxSeqLen: 24,
    });
    const model = new TransformerLM(config, { seed: 11 });
    const live = getBackend().liveCount();
    const storage = new TestSlots(config, 5);
    const prompts = [[1, 5, 9, 2, 7], [3], [4, 8, 15, 16, 22, 11, 6, 10, 12], [2, 2]];
    // Slots out of order and one left empty; a sequence on a cache of its own decodes beside the slotted ones.
    const own = new TestCache(config);
    const batched: KVStore[] = [
      new TestSlot(storage, 3),
      new TestSlot(storage, 0),
      new TestSlot(storage, 1),
      own,
    ];
    const single = prompts.map(() => new TestCache(config));
    const steps: [number, number[]][][] = [
      [
        [0, prompts[0]],
        [2, prompts[2].slice(0, 4)],
        [3, prompts[3]],
      ],
      [
        [0, [13]],
        [2, prompts[2].slice(4)],
        [1, prompts[1]],
        [3, [5]],
      ],
      [
        [1, [14]],
        [3, [6]],
        [0, [17]],
        [2, [19]],
      ],
      [
        [2, [20]],
        [0, [18]],
        [1, [21]],
      ],
    ];
    const offsets = prompts.map(() => 0);
    for (const step of steps) {
      const logits = forwardBatch(
        model,
        step.map(([s, tokens]) => ({ tokens, offset: offsets[s], cache: batched[s] })),
      ); // [S, vocab]
      const rows = await logits.float32Data();
      logits.dispose();
      for (const [row, [s, tokens]] of step.entries()) {
        const expected = await alone(model, tokens, offsets[s], single[s]);
        expectClose(rows.subarray(row * config.vocabSize, (row + 1) * config.vocabSize), expected);
        offsets[s] += tokens.length;
      }
    }
    for (const cache of [...single, own, storage]) cache.dispose();
    expect(getBackend().liveCount()).toBe(live);
    model.dispose();
  });

  it('every slot decoding, in slot order, at different positions: the logits each gets alone', async () => {
    const config = makeConfig('llama', { vocabSize: 19, dim: 16, numLayers: 2, numHeads: 2, maxSeqLen: 12 });
    const model = new TransformerLM(config, { seed: 3 });
    const live = getBackend().liveCount();
    const storage = new TestSlots(config, 3);
    const slots = [0, 1, 2].map((slot) => new TestSlot(storage, slot));
    const single = slots.map(() => new TestCache(config));
    const prompts = [[4, 1], [7, 3, 9, 2], [5]];
    const offsets = prompts.map((p) => p.length);
    for (const [s, tokens] of prompts.entries()) {
      forwardBatch(model, [{ tokens, offset: 0, cache: slots[s] }]).dispose();
      await alone(model, tokens, 0, single[s]);
    }
    for (const step of [
      [11, 12, 13],
      [14, 15, 16],
    ]) {
      const logits = forwardBatch(
        model,
        step.map((token, s) => ({ tokens: [token], offset: offsets[s], cache: slots[s] })),
      ); // [3, vocab]
      const rows = await logits.float32Data();
      logits.dispose();
      for (const [s, token] of step.entries()) {
        const expected = await alone(model, [token], offsets[s], single[s]);
        expectClose(rows.subarray(s * config.vocabSize, (s + 1) * config.vocabSize), expected);
        offsets[s]++;
      }
    }
    for (const cache of [...single, storage]) cache.dispose();
    expect(getBackend().liveCount()).toBe(live);
    model.dispose();
  });

  it('refuses two sequences of a batch in one slot, and a slot past the storage', () => {
    const config = makeConfig('llama', { vocabSize: 5, dim: 8, numLayers: 1, numHeads: 2, maxSeqLen: 4 });
    const model = new TransformerLM(config);
    const storage = new TestSlots(config, 2);
    expect(() =>
      forwardBatch(model, [
        { tokens: [1], offset: 0, cache: new TestSlot(storage, 1) },
        { tokens: [2], offset: 0, cache: new TestSlot(storage, 1) },
      ]),
    ).toThrow(/sequence 1 is in slot 1, which another sequence of the batch holds/);
    expect(() => forwardBatch(model, [{ tokens: [1], offset: 0, cache: new TestSlot(storage, 2) }])).toThrow(
      /sequence 0 is in slot 2; its shared storage has slots \[0, 2\)/,
    );
    storage.dispose();
    model.dispose();
  });

  it('refuses an empty batch, a bad token and positions past maxSeqLen, naming the sequence', () => {
    const config = makeConfig('llama', { vocabSize: 5, dim: 8, numLayers: 1, numHeads: 2, maxSeqLen: 4 });
    const model = new TransformerLM(config);
    const cache = new TestCache(config);
    expect(() => forwardBatch(model, [])).toThrow(/at least one sequence/);
    expect(() => forwardBatch(model, [{ tokens: [1, 5], offset: 0, cache }])).toThrow(
      /sequence 0 token 1 is 5; ids must be integers in \[0, 5\)/,
    );
    expect(() =>
      forwardBatch(model, [
        { tokens: [1], offset: 0, cache },
        { tokens: [1, 2], offset: 3, cache },
      ]),
    ).toThrow(/sequence 1 puts 2 tokens at offset 3; positions must lie in \[0, 4\)/);
    cache.dispose();
    model.dispose();
  });
});
