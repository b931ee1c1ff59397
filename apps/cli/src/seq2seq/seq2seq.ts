import { AutodiffBackend, valueAndGrad } from '@loom/autograd';
import { CpuBackend } from '@loom/backend-cpu';
import { KVCache } from '@loom/kvcache';
import {
  AdamW,
  beamSearch,
  disposeBatch,
  EncoderDecoder,
  exactMatch,
  makeSeq2SeqConfig,
  readClipFactor,
  type Seq2SeqPair,
  seq2seqBatch,
  ToyTask,
  warmupCosine,
} from '@loom/nn';
import { Rng } from '@loom/sampler';
import { setBackend } from '@loom/tensor';
import { UsageError } from '../flags';
import type { LoomIo } from '../io';
import { parseSeq2SeqArgs, type Seq2SeqRun, USAGE } from './args';

/** Held-out strings the periodic checks decode (the final check decodes all of them). */
const QUICK_EVAL = 200;

/** `count` distinct random examples, and the set of their sources. */
function heldOutSet(task: ToyTask, count: number, draw: () => number): Seq2SeqPair[] {
  const { alphabet, minLength, maxLength } = task.options;
  let possible = 0;
  for (let n = minLength; n <= maxLength && possible < 2 * count; n++) possible += alphabet ** n;
  if (possible < 2 * count) {
    throw new UsageError(
      `--held-out: ${count} strings would be more than half of the ${possible} the alphabet and lengths allow; hold out fewer or allow longer strings`,
    );
  }
  const pairs = new Map<string, Seq2SeqPair>();
  while (pairs.size < count) {
    const pair = task.pair(draw);
    pairs.set(task.key(pair.source), pair);
  }
  return [...pairs.values()];
}

async function train(run: Seq2SeqRun, io: LoomIo): Promise<void> {
  const backend = new CpuBackend({ threads: run.threads });
  setBackend(new AutodiffBackend(backend));
  const task = new ToyTask(run);
  const config = makeSeq2SeqConfig('gpt2', {
    vocabSize: task.vocabSize,
    dim: run.dim,
    numLayers: run.layers,
    encoderLayers: run.layers,
    numHeads: run.heads,
    maxSeqLen: run.maxLength + 1,
  });
  const model = new EncoderDecoder(config, { seed: run.seed });
  const rng = new Rng(run.seed);
  const draw = () => rng.nextFloat();
  const heldOut = heldOutSet(task, run.heldOut, draw);
  const held = new Set(heldOut.map((p) => task.key(p.source)));
  const newSelfCache = (batch: number) => KVCache.forModel(config, { batch });
  const measure = (pairs: readonly Seq2SeqPair[]) =>
    exactMatch(model.eval(), pairs, { special: task.special, newSelfCache });
  io.stdout.write(
    `seq2seq ${run.task}: strings of ${run.minLength}-${run.maxLength} symbols over ${run.alphabet}; encoder–decoder ` +
      `${run.layers}+${run.layers} layers, dim ${run.dim}, ${countParameters(model)} parameters; ` +
      `${run.steps} steps of ${run.batch}; ${heldOut.length} held-out strings\n`,
  );
  const params = model.parameters();
  const opt = new AdamW({ weightDecay: 0.01 });
  const lr = warmupCosine({
    maxLr: run.lr,
    minLr: run.lr / 20,
    warmup: Math.min(100, run.steps),
    decaySteps: run.steps,
  });
  const started = performance.now();
  let recent = 0;
  for (let step = 0; step < run.steps && !io.signal.aborted; step++) {
    const pairs: Seq2SeqPair[] = [];
    while (pairs.length < run.batch) {
      const pair = task.pair(draw);
      if (!held.has(task.key(pair.source))) pairs.push(pair);
    }
    const batch = seq2seqBatch(pairs, task.special);
    model.train();
    const { value, grads } = valueAndGrad(() => model.loss(batch), params);
    opt.step(params, grads, lr(step), await readClipFactor(grads, 1));
    recent += await value.item();
    for (const t of [value, ...grads]) t.dispose();
    disposeBatch(batch);
    const done = step + 1;
    if (done % 50 === 0 || done === run.steps) {
      const seconds = (performance.now() - started) / 1000;
      io.stdout.write(
        `step ${done}: loss ${(recent / (done % 50 || 50)).toFixed(4)} (${seconds.toFixed(0)} s)\n`,
      );
      recent = 0;
    }
    if (run.evalEvery > 0 && done % run.evalEvery === 0 && done < run.steps) {
      const quick = await measure(heldOut.slice(0, QUICK_EVAL));
      io.stdout.write(
        `step ${done}: exact-match ${percent(quick.correct, quick.total)} on ${quick.total} held-out strings\n`,
      );
    }
  }
  const final = await measure(heldOut);
  io.stdout.write(
    `exact-match ${percent(final.correct, final.total)} (${final.correct}/${final.total} held-out strings, greedy)\n`,
  );
  for (const [i, pair] of heldOut.slice(0, run.examples).entries()) {
    const greedy = final.outputs[i];
    const mark = (tokens: readonly number[]) => (task.key(tokens) === task.key(pair.target) ? 'ok' : 'WRONG');
    let line = `  ${task.text(pair.source)} -> ${task.text(greedy.tokens)} ${mark(greedy.tokens)}`;
    if (run.beam > 1) {
      const [best] = await beamSearch(model, pair.source, {
        special: task.special,
        beamWidth: run.beam,
        maxLength: config.maxSeqLen,
      });
      line += ` | beam ${run.beam}: ${task.text(best.tokens)} (log p ${best.logProb.toFixed(3)})`;
    }
    io.stdout.write(`${line}\n`);
  }
  opt.dispose();
  model.dispose();
}

function countParameters(model: EncoderDecoder): number {
  return model.parameters().reduce((n, p) => n + p.size, 0);
}

function percent(part: number, whole: number): string {
  return `${((100 * part) / whole).toFixed(1)}%`;
}

/** Runs `loom seq2seq`; returns the exit status (0 done, 1 failed, 2 bad usage). */
export async function main(argv: readonly string[], io: LoomIo): Promise<number> {
  try {
    const command = parseSeq2SeqArgs(argv);
    if (command.kind === 'help') io.stdout.write(`${USAGE}\n`);
    else await train(command, io);
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const usage = error instanceof UsageError;
    io.stderr.write(`seq2seq: ${message}${usage ? '; see loom seq2seq --help' : ''}\n`);
    return usage ? 2 : 1;
  }
}
