/** What other apps (the experiments) reuse from the trainer: its built-in corpus, its batches and chart ticks. */
export { type Batch, drawBatch } from './batches';
export { niceTicks } from './loss-svg';
export { generateStories } from './stories';
