import { signal } from '@preact/signals';
import type { AttentionMap } from '../protocol';

/** The map the worker last sent for the attention view. */
export const attention = signal<AttentionMap | undefined>(undefined);
/** Whether the view waits for a map it asked for. */
export const attentionPending = signal(false);
