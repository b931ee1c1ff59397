/** A model that generates one token at a time from a state it keeps: a KV cache or a recurrent state. */
export interface Stepper {
  /** Feeds `tokens` (the context so far); afterwards the state holds them. */
  prefill(tokens: Int32Array): Promise<void>;
  /** Feeds one token after the current context and reads its logits back (as decoding does). */
  step(token: number): Promise<void>;
  /** Bytes of the per-sequence state right now (the KV entries written, or the fixed recurrent state). */
  stateBytes(): number;
  dispose(): void;
}

/** What decoding after a context of some length costs. */
export interface DecodeCost {
  readonly context: number;
  readonly msPerToken: number;
  readonly stateBytes: number;
}

/** Prefills `context` tokens of `tokens`, then times `steps` decode steps (the first is a warm-up, not timed). */
export async function decodeCost(
  make: () => Stepper,
  tokens: Int32Array,
  context: number,
  steps: number,
): Promise<DecodeCost> {
  if (context + steps + 1 > tokens.length) {
    throw new Error(
      `decodeCost: ${context + steps + 1} tokens needed, the corpus slice has ${tokens.length}`,
    );
  }
  const stepper = make();
  try {
    await stepper.prefill(tokens.subarray(0, context));
    await stepper.step(tokens[context]);
    const started = performance.now();
    for (let i = 1; i <= steps; i++) await stepper.step(tokens[context + i]);
    const msPerToken = (performance.now() - started) / steps;
    return { context, msPerToken, stateBytes: stepper.stateBytes() };
  } finally {
    stepper.dispose();
  }
}
