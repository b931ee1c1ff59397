/** Learning rate at a step (0-based). */
export type Schedule = (step: number) => number;

export interface WarmupCosineOptions {
  readonly maxLr: number;
  readonly minLr: number;
  /** Steps of linear warmup from maxLr/warmup to maxLr. */
  readonly warmup: number;
  /** Step at which the cosine reaches minLr; later steps stay at minLr. */
  readonly decaySteps: number;
}

/** Linear warmup, then cosine decay from maxLr to a floor of minLr. */
export function warmupCosine(o: WarmupCosineOptions): Schedule {
  if (!(o.minLr <= o.maxLr))
    throw new Error(`warmupCosine: minLr ${o.minLr} must not exceed maxLr ${o.maxLr}`);
  return (step) => {
    if (step < o.warmup) return (o.maxLr * (step + 1)) / o.warmup;
    if (step >= o.decaySteps) return o.minLr;
    const progress = (step - o.warmup) / Math.max(1, o.decaySteps - o.warmup);
    return o.minLr + 0.5 * (1 + Math.cos(Math.PI * progress)) * (o.maxLr - o.minLr);
  };
}

export function constantSchedule(lr: number): Schedule {
  return () => lr;
}
