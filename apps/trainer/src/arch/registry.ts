import type { Architecture } from './architecture';
import { decoder } from './decoder';
import { encoder } from './encoder';
import { mamba } from './mamba';
import type { ArchName } from './names';

/** Every architecture the trainer builds, by its `--arch` name. */
export const ARCHITECTURES: Readonly<Record<ArchName, Architecture>> = { decoder, encoder, mamba };
