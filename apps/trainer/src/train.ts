import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AutodiffBackend } from '@loom/autograd';
import { writeFileAtomic } from '@loom/models';
import { AdamW, makeConfig, TransformerLM, warmupCosine } from '@loom/nn';
import { setBackend, type Tensor } from '@loom/tensor';
import { optionsToArgs } from './args';
import { createBackend } from './backend';
import { type Batch, trainBatches } from './batches';
import { loadRun, type SavedRun, saveRun } from './checkpoint';
import { type Corpus, loadCorpus } from './corpus';
import { buildTokenizer, type Dataset, encodeDataset } from './dataset';
import { evalBatches, meanLoss } from './evaluate';
import { formatDuration, formatLoss } from './format';
import type { TrainIO } from './io';
import { lossCurveSvg } from './loss-svg';
import type { GivenOptions, TrainOptions } from './options';
import { Progress } from './progress';
import { resolveOptions } from './resolve';
import { restoreRun } from './restore';
import { type EndReason, type EvalRecord, RunLog, type StepRecord } from './run-log';
import { writeSample } from './sample-text';
import { trainStep } from './step';
import { describeRun } from './summary';
import type { TrainerState } from './trainer-state';

/** Files a run writes beside its checkpoint. */
export const RUN_FILES = { log: 'train-log.jsonl', lossCurve: 'loss.svg' } as const;

/** A step's loss or gradient norm was not finite and the run was told to stop. */
export class NonFiniteError extends Error {
  override readonly name = 'NonFiniteError';
}

export interface TrainHooks {
  /** When aborted (Ctrl-C), the run saves a checkpoint after the current step and returns. */
  readonly signal?: AbortSignal;
  /** Told after every step. */
  readonly onStep?: (record: StepRecord) => void;
}

export interface TrainResult {
  readonly options: TrainOptions;
  readonly end: Exclude<EndReason, 'nonfinite'>;
  /** Steps completed. */
  readonly step: number;
  /** Steps and evaluations of this session (not those before a resume). */
  readonly steps: readonly StepRecord[];
  readonly evals: readonly EvalRecord[];
  /** The generated text (prompt included), when a sample was asked for and the run finished. */
  readonly sample: string | undefined;
}

function checkSameData(corpus: Corpus, saved: SavedRun): void {
  if (corpus.sha256 !== saved.state.data.sha256) {
    throw new Error(
      `--resume: the checkpoint was trained on ${saved.state.data.source} (SHA-256 ${saved.state.data.sha256}), ` +
        `but ${corpus.source} has SHA-256 ${corpus.sha256}; resume with the same text (--data)`,
    );
  }
}

/**
 * Trains a language model as `given` (command-line options) says, or continues the run in
 * `given.resume`; writes checkpoints, the JSON-lines log and the loss curve to the output
 * directory, then prints a sample. Relative defaults resolve against `baseDir`.
 */
export async function train(
  given: GivenOptions,
  baseDir: string,
  io: TrainIO,
  hooks: TrainHooks = {},
): Promise<TrainResult> {
  const sessionStart = performance.now();
  const saved = given.resume === undefined ? undefined : loadRun(given.resume);
  const options = resolveOptions(given, baseDir, saved?.state.args);
  const corpus = loadCorpus(options.data);
  if (saved) checkSameData(corpus, saved);
  const tokenizer =
    saved?.tokenizer ??
    buildTokenizer(corpus, {
      kind: options.tokenizer,
      vocabSize: options.vocabSize,
      onBpe: (message) => io.stderr.write(`${message}...\n`),
    });
  const dataset = encodeDataset(corpus, tokenizer, options.block);
  setBackend(new AutodiffBackend(await createBackend(options.backend)));
  const config =
    saved?.config ??
    makeConfig(options.preset, {
      vocabSize: tokenizer.vocabSize,
      dim: options.dim,
      numLayers: options.layers,
      numHeads: options.heads,
      numKvHeads: options.kvHeads,
      maxSeqLen: options.block,
    });
  const model = new TransformerLM(config, { seed: options.seed, dropout: options.dropout });
  const optimizer = new AdamW({
    beta1: options.beta1,
    beta2: options.beta2,
    weightDecay: options.weightDecay,
  });
  try {
    if (saved) restoreRun(model, optimizer, saved);
    io.stderr.write(describeRun(options, corpus, dataset, config, saved?.state.step));
    const session = new Session(options, corpus, dataset, model, optimizer, io, hooks, saved?.state);
    const end = await session.run();
    const sample =
      end === 'finished' && options.sampleTokens > 0
        ? await writeSample(model, tokenizer, options, io.stdout)
        : undefined;
    if (end === 'interrupted') {
      io.stderr.write(
        `interrupted at step ${session.step}; continue with: pnpm train --resume ${options.out}\n`,
      );
    }
    io.stderr.write(`done in ${formatDuration(performance.now() - sessionStart)}; files in ${options.out}\n`);
    return { options, end, step: session.step, steps: session.steps, evals: session.evals, sample };
  } finally {
    optimizer.dispose();
    model.dispose();
  }
}

/**
 * Lets the event loop run: on the CPU every read-back resolves at once, so without this a
 * run would never see Ctrl-C (signals arrive as event-loop callbacks) nor flush its progress
 * to a pipe until it ended.
 */
function nextTick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The training loop of one session and the bookkeeping a checkpoint needs. */
class Session {
  readonly steps: StepRecord[] = [];
  readonly evals: EvalRecord[] = [];
  step: number;
  #skipped: number;
  #trainingForwards: number;
  #bestValLoss: number | null;
  readonly #elapsedBefore: number;
  readonly #start = performance.now();
  readonly #log: RunLog;
  readonly #progress: Progress;
  readonly #params: Tensor[];
  readonly #evalTrain: Batch[];
  readonly #evalVal: Batch[];
  #lastCheckpoint: number | undefined;

  constructor(
    private readonly options: TrainOptions,
    private readonly corpus: Corpus,
    private readonly dataset: Dataset,
    private readonly model: TransformerLM,
    private readonly optimizer: AdamW,
    io: TrainIO,
    private readonly hooks: TrainHooks,
    saved: TrainerState | undefined,
  ) {
    this.step = saved?.step ?? 0;
    this.#skipped = saved?.skipped ?? 0;
    this.#trainingForwards = saved?.trainingForwards ?? 0;
    this.#bestValLoss = saved?.bestValLoss ?? null;
    this.#elapsedBefore = saved?.elapsedMs ?? 0;
    this.#lastCheckpoint = saved?.step;
    this.#params = model.parameters();
    const o = options;
    this.#evalTrain = evalBatches(dataset.train, o.seed, 'evalTrain', o.evalBatches, o.batch, o.block);
    this.#evalVal = evalBatches(dataset.val, o.seed, 'evalVal', o.evalBatches, o.batch, o.block);
    mkdirSync(o.out, { recursive: true });
    const previousLog =
      saved && o.resume !== undefined ? { path: join(o.resume, RUN_FILES.log), step: saved.step } : undefined;
    this.#log = new RunLog(join(o.out, RUN_FILES.log), previousLog);
    this.#progress = new Progress(io.stderr, o.iters);
    this.#log.append({
      type: 'start',
      time: new Date().toISOString(),
      step: this.step,
      resumedFrom: o.resume ?? null,
      args: optionsToArgs({ ...o, resume: undefined }),
      backend: o.backend,
      parameters: this.#params.reduce((n, p) => n + p.size, 0),
      vocabSize: dataset.tokenizer.vocabSize,
      trainTokens: dataset.train.length,
      valTokens: dataset.val.length,
    });
  }

  async run(): Promise<TrainResult['end']> {
    const o = this.options;
    const schedule = warmupCosine({ maxLr: o.lr, minLr: o.minLr, warmup: o.warmup, decaySteps: o.iters });
    const tokensPerStep = o.batch * o.block * o.gradAccum;
    if (this.step === 0) await this.#evaluate();
    while (this.step < o.iters) {
      const lr = schedule(this.step);
      const started = performance.now();
      const outcome = await trainStep({
        model: this.model,
        params: this.#params,
        optimizer: this.optimizer,
        batches: trainBatches(this.dataset.train, o.seed, this.step, o.gradAccum, o.batch, o.block),
        lr,
        clip: o.clip,
      });
      const ms = performance.now() - started;
      this.#trainingForwards += o.gradAccum;
      this.step++;
      const record: StepRecord = {
        type: 'step',
        step: this.step,
        loss: outcome.loss,
        lr,
        gradNorm: outcome.gradNorm,
        ms,
        tokensPerSec: tokensPerStep / (ms / 1000),
        skipped: outcome.kind === 'nonfinite',
      };
      this.steps.push(record);
      this.#log.append(record);
      this.#progress.update(record);
      this.hooks.onStep?.(record);
      if (outcome.kind === 'nonfinite') this.#nonFinite(record);
      const last = this.step === o.iters;
      if (last || (o.evalEvery > 0 && this.step % o.evalEvery === 0)) await this.#evaluate();
      const interrupted = this.hooks.signal?.aborted === true;
      if (last || interrupted || (o.ckptEvery > 0 && this.step % o.ckptEvery === 0)) await this.#checkpoint();
      if (interrupted && !last) return this.#end('interrupted');
      await nextTick();
    }
    return this.#end('finished');
  }

  #end(reason: TrainResult['end']): TrainResult['end'] {
    this.#progress.finish();
    this.#log.append({ type: 'end', step: this.step, reason, elapsedMs: this.#elapsedMs() });
    this.#writeLossCurve();
    return reason;
  }

  #elapsedMs(): number {
    return this.#elapsedBefore + performance.now() - this.#start;
  }

  /** Stops the run (the default) or counts the skipped step; the update was not applied either way. */
  #nonFinite(record: StepRecord): void {
    const what = `loss ${formatLoss(record.loss)}, gradient norm ${formatLoss(record.gradNorm)}`;
    if (this.options.onNonfinite === 'skip') {
      this.#skipped++;
      this.#progress.note(
        `step ${record.step}: non-finite ${what}; update skipped (${this.#skipped} so far)`,
      );
      return;
    }
    this.#progress.finish();
    this.#log.append({ type: 'end', step: this.step, reason: 'nonfinite', elapsedMs: this.#elapsedMs() });
    this.#writeLossCurve();
    const checkpoint =
      this.#lastCheckpoint === undefined
        ? 'no checkpoint was saved'
        : `the last checkpoint (step ${this.#lastCheckpoint}) is in ${this.options.out}`;
    throw new NonFiniteError(
      `step ${record.step}: non-finite ${what}. The update was not applied and the run stopped; ${checkpoint}. ` +
        'Lower --lr (or --clip), or pass --on-nonfinite skip to drop such steps and go on',
    );
  }

  async #evaluate(): Promise<void> {
    const trainLoss = await meanLoss(this.model, this.#evalTrain);
    const valLoss = await meanLoss(this.model, this.#evalVal);
    const best = this.#bestValLoss === null || valLoss < this.#bestValLoss;
    if (best) this.#bestValLoss = valLoss;
    const record: EvalRecord = { type: 'eval', step: this.step, trainLoss, valLoss };
    this.evals.push(record);
    this.#log.append(record);
    this.#progress.note(
      `step ${this.step}: train loss ${formatLoss(trainLoss)}, val loss ${formatLoss(valLoss)}${best ? ' (best)' : ''}`,
    );
    this.#writeLossCurve();
  }

  async #checkpoint(): Promise<void> {
    const started = performance.now();
    const state: TrainerState = {
      step: this.step,
      optimizerSteps: this.optimizer.stepCount,
      skipped: this.#skipped,
      trainingForwards: this.#trainingForwards,
      bestValLoss: this.#bestValLoss,
      elapsedMs: this.#elapsedMs(),
      args: optionsToArgs({ ...this.options, resume: undefined }),
      data: {
        source: this.corpus.source,
        sha256: this.corpus.sha256,
        trainTokens: this.dataset.train.length,
        valTokens: this.dataset.val.length,
      },
    };
    await saveRun(this.options.out, {
      model: this.model,
      optimizer: this.optimizer,
      tokenizer: this.dataset.tokenizer,
      state,
    });
    this.#lastCheckpoint = this.step;
    this.#progress.note(
      `step ${this.step}: checkpoint saved to ${this.options.out} (${(performance.now() - started).toFixed(0)} ms)`,
    );
  }

  #writeLossCurve(): void {
    const o = this.options;
    const title = `${this.corpus.source.split('/').pop()}: ${o.preset}, ${o.layers} layers, dim ${o.dim}, block ${o.block}`;
    const svg = lossCurveSvg(this.#log.history, title);
    writeFileAtomic(join(o.out, RUN_FILES.lossCurve), new TextEncoder().encode(svg));
  }
}
