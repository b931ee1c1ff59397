/** The model families the trainer builds (`--arch`). */
export type ArchName = 'decoder' | 'encoder' | 'mamba';

/** What a run trains for (`--objective`): next-token prediction, masked tokens, or a sequence label. */
export type Objective = 'clm' | 'mlm' | 'classify';

/** The objectives each architecture trains; the first is its default. */
export const ARCH_OBJECTIVES: Readonly<Record<ArchName, readonly Objective[]>> = {
  decoder: ['clm'],
  encoder: ['mlm', 'classify'],
  mamba: ['clm'],
};

/** The `--arch` names, in the order the usage lists them. */
export const ARCH_NAMES: readonly ArchName[] = ['decoder', 'encoder', 'mamba'];

/** Every `--objective`. */
export const OBJECTIVES: readonly Objective[] = ['clm', 'mlm', 'classify'];
