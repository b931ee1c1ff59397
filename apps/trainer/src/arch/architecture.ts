import type { CheckpointConfig, NamedTensor } from '@loom/models';
import type { Module, TransformerConfig } from '@loom/nn';
import type { Tensor } from '@loom/tensor';
import type { Batch } from '../batches';
import type { Dataset } from '../dataset';
import type { TextSink } from '../io';
import type { TrainOptions } from '../options';
import type { ArchName } from './names';

/** The split an evaluation estimates. */
export type Split = 'train' | 'val';

/** An evaluation of the model on fixed batches; `accuracy` where the objective has one. */
export interface Evaluation {
  readonly loss: number;
  readonly accuracy?: number;
}

/** What the architecture may read to build its model and its batches. */
export interface ArchData {
  readonly dataset: Dataset;
  readonly options: TrainOptions;
}

/** The tensors a checkpoint holds: `body` fits `config` as @loom/models expects; `heads` are saved beside. */
export interface ArchTensors {
  readonly body: NamedTensor[];
  readonly heads: NamedTensor[];
}

/** A built model with everything the training loop asks of it. */
export interface ArchModel {
  /** Parameters, train()/eval(), modules() (dropout restore), loadStateDict, dispose. */
  readonly module: Module;
  /** Saved as config.json (the model's own: a transformer's, or a MambaConfig); its vocabSize counts the architecture's extra tokens. */
  readonly config: CheckpointConfig;
  /** Tokens one training step learns from (for tokens/s). */
  readonly tokensPerStep: number;
  /** The micro-batches of training step `step` (0-based): a pure function of the seed and step. */
  trainBatches(step: number): Batch[];
  /** The fixed evaluation batches of a split (the same at every evaluation). */
  evalBatches(split: Split): Batch[];
  /** Scalar loss of one batch, recorded for autograd under valueAndGrad. */
  loss(batch: Batch): Tensor;
  /** Mean loss (and accuracy) over the batches in evaluation mode; one read-back. */
  evaluate(batches: readonly Batch[]): Promise<Evaluation>;
  /** Every parameter as checkpoint tensors. */
  tensors(): Promise<ArchTensors>;
  /** What the run shows when it finishes (a generated sample, filled-in masks); returns the text or undefined. */
  report(out: TextSink): Promise<string | undefined>;
}

/** One architecture of the registry (arch/registry.ts); the objectives it trains are in names.ts. */
export interface Architecture {
  readonly name: ArchName;
  /** Ids the model has beyond the tokenizer's (special tokens). */
  readonly extraTokens: number;
  /** A fresh model of `config` (whose vocabSize already counts extraTokens), seeded by options.seed. */
  build(config: TransformerConfig, data: ArchData): ArchModel;
}
