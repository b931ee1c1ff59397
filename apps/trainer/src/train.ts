import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { AutodiffBackend } from '@loom/autograd';
import { describeConfig, isMambaConfig, lockDirectory, writeFileAtomic } from '@loom/models';
import { AdamW, type Lora, makeConfig, TransformerLM, warmupCosine } from '@loom/nn';
import { setBackend, type Tensor } from '@loom/tensor';
import type { ArchModel } from './arch/architecture';
import { ARCHITECTURES } from './arch/registry';
import { optionsToArgs } from './args';
import { createBackend } from './backend';
import type { Batch } from './batches';
import { loadRun, type SavedRun, saveRun } from './checkpoint';
import { type Corpus, loadCorpus } from './corpus';
import { buildTokenizer, type Dataset, encodeDataset } from './dataset';
import { lossProblem } from './divergence';
import { applyRunLora, describeLora, initialTokenizer, loadInitial, saveLoraFiles } from './fine-tune';
import { formatDuration, formatLoss } from './format';
import type { TrainIO } from './io';
import { lossCurveSvg } from './loss-svg';
import type { GivenOptions, TrainOptions } from './options';
import { Progress } from './progress';
import { resolveOptions } from './resolve';
import { restoreRun } from './restore';
import { type EndReason, type EvalRecord, RunLog, type StepRecord } from './run-log';
import { trainStep } from './step';
import { describeRun } from './summary';
import type { TrainerState } from './trainer-state';

/** Files a run writes beside its checkpoint. */
export const RUN_FILES = { log: 'train-log.jsonl', lossCurve: 'loss.svg' } as const;

/**
 * The run stopped on a non-finite step (--on-nonfinite stop, or more skipped steps than --max-skipped-steps),
 * or it ended with a non-finite or diverged loss, so its final checkpoint was not saved.
 */
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
 * directory, then prints a sample. Relative defaults resolve against `baseDir`. The output
 * directory is locked for the run: a second trainer on it is refused, naming this one.
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
  const lock = lockDirectory(options.out, {
    holderName: 'another trainer',
    remedy: 'wait for it or pick another --out',
    onStaleTakeover: (stale) =>
      io.stderr.write(
        `${options.out}: taking over the lock of pid ${stale.pid} (started ${stale.startedAt}), which no longer runs\n`,
      ),
  });
  try {
    return await trainLocked(options, saved, sessionStart, io, hooks);
  } finally {
    lock.release();
  }
}

async function trainLocked(
  options: TrainOptions,
  saved: SavedRun | undefined,
  sessionStart: number,
  io: TrainIO,
  hooks: TrainHooks,
): Promise<TrainResult> {
  const corpus = loadCorpus(options.data);
  if (saved) checkSameData(corpus, saved);
  const initial = saved === undefined && options.initFrom !== undefined ? loadInitial(options) : undefined;
  const tokenizer =
    saved?.tokenizer ??
    (initial === undefined ? undefined : initialTokenizer(options, initial)) ??
    buildTokenizer(corpus, {
      kind: options.tokenizer,
      vocabSize: options.vocabSize,
      onBpe: (message) => io.stderr.write(`${message}...\n`),
    });
  const dataset = encodeDataset(corpus, tokenizer, options.block);
  const arch = ARCHITECTURES[options.arch];
  const vocabSize = tokenizer.vocabSize + arch.extraTokens;
  if (saved && saved.config.vocabSize !== vocabSize) {
    throw new Error(
      `--resume: the tokenizer has ${tokenizer.vocabSize} tokens, so a ${options.arch} expects ${vocabSize}, ` +
        `but the checkpoint's model has ${saved.config.vocabSize}; the checkpoint is inconsistent`,
    );
  }
  if (initial !== undefined && vocabSize > initial.config.vocabSize) {
    throw new Error(
      `--init-from ${options.initFrom}: the tokenizer has ${tokenizer.vocabSize} tokens but the model only ${initial.config.vocabSize}; start from a checkpoint with its tokenizer.json, or use a tokenizer the model covers`,
    );
  }
  setBackend(new AutodiffBackend(await createBackend(options.backend)));
  // A Mamba run's checkpoint holds the MambaConfig; its run config comes again from the resumed options.
  const config =
    (saved === undefined || isMambaConfig(saved.config) ? undefined : saved.config) ??
    initial?.config ??
    makeConfig(options.preset, {
      vocabSize,
      dim: options.dim,
      numLayers: options.layers,
      numHeads: options.heads,
      numKvHeads: options.kvHeads,
      maxSeqLen: options.block,
    });
  const model = arch.build(config, { dataset, options });
  if (saved !== undefined && !isDeepStrictEqual(model.config, saved.config)) {
    model.module.dispose();
    throw new Error(
      `--resume: the checkpoint's model (${describeConfig(saved.config)}) is not the one its options build (${describeConfig(model.config)}); the checkpoint is inconsistent`,
    );
  }
  if (initial !== undefined) model.module.loadStateDict(new Map(initial.tensors.map((t) => [t.name, t])));
  // The model's own weights (heads included), counted before any LoRA adapters join them.
  const parameters = model.module.weightCount();
  const transformer = model.module instanceof TransformerLM ? model.module : undefined;
  const lora =
    options.loraRank > 0 && transformer !== undefined ? applyRunLora(transformer, options) : undefined;
  const optimizer = new AdamW({
    beta1: options.beta1,
    beta2: options.beta2,
    weightDecay: options.weightDecay,
  });
  try {
    if (saved) restoreRun(model.module, optimizer, saved);
    io.stderr.write(
      describeRun(options, corpus, dataset, config, { config: model.config, parameters }, saved?.state.step),
    );
    if (initial !== undefined) io.stderr.write(`init:  ${options.initFrom} (${initial.format})\n`);
    if (lora !== undefined) io.stderr.write(describeLora(lora, options));
    const session = new Session(options, corpus, dataset, model, optimizer, io, hooks, saved?.state, lora);
    const end = await session.run();
    const sample = end === 'finished' ? await model.report(io.stdout) : undefined;
    if (end === 'interrupted') {
      io.stderr.write(
        `interrupted at step ${session.step}; continue with: pnpm train --resume ${options.out}\n`,
      );
    }
    io.stderr.write(`done in ${formatDuration(performance.now() - sessionStart)}; files in ${options.out}\n`);
    return { options, end, step: session.step, steps: session.steps, evals: session.evals, sample };
  } finally {
    optimizer.dispose();
    lora?.dispose();
    model.module.dispose();
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
    private readonly model: ArchModel,
    private readonly optimizer: AdamW,
    io: TrainIO,
    private readonly hooks: TrainHooks,
    saved: TrainerState | undefined,
    /** Adapters to train instead of the model's own weights, which then stay frozen. */
    private readonly lora: Lora | undefined,
  ) {
    this.step = saved?.step ?? 0;
    this.#skipped = saved?.skipped ?? 0;
    this.#trainingForwards = saved?.trainingForwards ?? 0;
    this.#bestValLoss = saved?.bestValLoss ?? null;
    this.#elapsedBefore = saved?.elapsedMs ?? 0;
    this.#lastCheckpoint = saved?.step;
    this.#params = lora?.parameters() ?? model.module.parameters();
    const o = options;
    this.#evalTrain = model.evalBatches('train');
    this.#evalVal = model.evalBatches('val');
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
    const tokensPerStep = this.model.tokensPerStep;
    if (this.step === 0) await this.#evaluate();
    while (this.step < o.iters) {
      const lr = schedule(this.step);
      const started = performance.now();
      const outcome = await trainStep({
        loss: this.model.loss,
        params: this.#params,
        optimizer: this.optimizer,
        batches: this.model.trainBatches(this.step),
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
      if (last || interrupted || (o.ckptEvery > 0 && this.step % o.ckptEvery === 0))
        await this.#saveIfFit(last);
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

  /**
   * Stops the run (the default) or counts the skipped step, stopping it once more than
   * --max-skipped-steps were skipped; the update was not applied either way.
   */
  #nonFinite(record: StepRecord): void {
    const o = this.options;
    const what = `non-finite loss ${formatLoss(record.loss)}, gradient norm ${formatLoss(record.gradNorm)}`;
    if (o.onNonfinite === 'stop') {
      this.#fail(
        `step ${record.step}: ${what}. The update was not applied and the run stopped`,
        'Lower --lr (or --clip), or pass --on-nonfinite skip to drop such steps and go on',
      );
    }
    this.#skipped++;
    if (this.#skipped > o.maxSkippedSteps) {
      this.#fail(
        `step ${record.step}: ${what}; that makes ${this.#skipped} skipped updates, more than --max-skipped-steps ${o.maxSkippedSteps}, so the run stopped`,
        'Lower --lr (or --clip), or raise --max-skipped-steps if such steps are rare',
      );
    }
    this.#progress.note(
      `step ${record.step}: ${what}; update skipped (${this.#skipped} of at most ${o.maxSkippedSteps})`,
    );
  }

  /** Ends the log and throws a NonFiniteError: `message`, where the last checkpoint is, and `advice`. */
  #fail(message: string, advice: string): never {
    this.#progress.finish();
    this.#log.append({ type: 'end', step: this.step, reason: 'nonfinite', elapsedMs: this.#elapsedMs() });
    this.#writeLossCurve();
    throw new NonFiniteError(`${message}; ${this.#kept()}. ${advice}`);
  }

  /** Where the last checkpoint is. */
  #kept(): string {
    return this.#lastCheckpoint === undefined
      ? 'no checkpoint was saved'
      : `the last checkpoint (step ${this.#lastCheckpoint}) is in ${this.options.out}`;
  }

  /**
   * Why the weights must not be saved now — the latest evaluation (of the weights as they are,
   * at the end of a run) or the latest step's training loss (of the weights before its update)
   * is non-finite or diverged (see lossProblem) — or undefined when they may be.
   */
  #unfitToSave(): string | undefined {
    const vocabSize = this.dataset.tokenizer.vocabSize;
    const evaluation = this.evals.at(-1);
    if (evaluation !== undefined) {
      const splits = [
        ['validation', evaluation.valLoss],
        ['training', evaluation.trainLoss],
      ] as const;
      for (const [split, loss] of splits) {
        const problem = lossProblem(loss, vocabSize);
        if (problem) return `the ${split} loss of the evaluation at step ${evaluation.step} ${problem}`;
      }
    }
    const step = this.steps.at(-1);
    const stepProblem = step === undefined ? undefined : lossProblem(step.loss, vocabSize);
    return stepProblem === undefined ? undefined : `the training loss of step ${this.step} ${stepProblem}`;
  }

  async #evaluate(): Promise<void> {
    const train = await this.model.evaluate(this.#evalTrain);
    const val = await this.model.evaluate(this.#evalVal);
    const [trainLoss, valLoss] = [train.loss, val.loss];
    const best = Number.isFinite(valLoss) && (this.#bestValLoss === null || valLoss < this.#bestValLoss);
    if (best) this.#bestValLoss = valLoss;
    const accuracy =
      train.accuracy === undefined || val.accuracy === undefined
        ? {}
        : { trainAccuracy: train.accuracy, valAccuracy: val.accuracy };
    const record: EvalRecord = { type: 'eval', step: this.step, trainLoss, valLoss, ...accuracy };
    this.evals.push(record);
    this.#log.append(record);
    const accuracyNote = val.accuracy === undefined ? '' : `, val accuracy ${val.accuracy.toFixed(4)}`;
    this.#progress.note(
      `step ${this.step}: train loss ${formatLoss(trainLoss)}, val loss ${formatLoss(valLoss)}${accuracyNote}${best ? ' (best)' : ''}`,
    );
    this.#writeLossCurve();
  }

  /**
   * Saves a checkpoint unless the losses say the weights are unfit (see #unfitToSave): then it
   * notes that the last good checkpoint stays, or, at the last step, fails the run.
   */
  async #saveIfFit(last: boolean): Promise<void> {
    const problem = this.#unfitToSave();
    if (problem === undefined) return this.#checkpoint();
    if (last) {
      this.#fail(
        `step ${this.step}: the final checkpoint was not saved: ${problem}`,
        'Lower --lr (or --clip) and train again',
      );
    }
    this.#progress.note(`step ${this.step}: checkpoint not saved: ${problem}; ${this.#kept()}`);
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
    if (this.lora !== undefined) {
      await saveLoraFiles(
        this.options.out,
        this.lora,
        this.dataset.tokenizer,
        this.options.initFrom ?? 'scratch',
      );
    }
    this.#lastCheckpoint = this.step;
    this.#progress.note(
      `step ${this.step}: checkpoint saved to ${this.options.out} (${(performance.now() - started).toFixed(0)} ms)`,
    );
  }

  #writeLossCurve(): void {
    const o = this.options;
    const family = o.arch === 'decoder' ? o.preset : `${o.arch} (${o.objective}, ${o.preset})`;
    const title = `${this.corpus.source.split('/').pop()}: ${family}, ${o.layers} layers, dim ${o.dim}, block ${o.block}`;
    const svg = lossCurveSvg(this.#log.history, title);
    writeFileAtomic(join(o.out, RUN_FILES.lossCurve), new TextEncoder().encode(svg));
  }
}
