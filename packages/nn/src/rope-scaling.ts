import { ropeInverseFrequencies } from '@loom/tensor';

/**
 * How RoPE's frequencies are changed for a context longer than the one a model was trained at, as Hugging Face
 * `transformers` defines each `rope_scaling` type (`rope_type`, or the older `type`), with Loom's names:
 * - `linear` (position interpolation): every inverse frequency divided by `factor`;
 * - `dynamic` (NTK-aware): theta raised to theta·(factor·L/L0 - (factor - 1))^(hd/(hd-2)) once the sequence
 *   length L passes the original context L0 (`originalMaxSeqLen`, else the model's maxSeqLen), else plain RoPE;
 * - `yarn`: low frequencies interpolated (÷ factor), high ones kept, a linear ramp between the correction
 *   dimensions of betaFast and betaSlow rotations; cos and sin scaled by the attention factor;
 * - `llama3`: wavelengths above L0 / lowFreqFactor divided by factor, below L0 / highFreqFactor kept, smoothly
 *   blended between.
 */
export type RopeScaling =
  | { readonly type: 'linear'; readonly factor: number }
  | {
      readonly type: 'dynamic';
      readonly factor: number;
      /** The context scaling starts past; absent is the model's maxSeqLen (transformers' behaviour). */
      readonly originalMaxSeqLen?: number;
    }
  | {
      readonly type: 'yarn';
      readonly factor: number;
      /**
       * The pretrained context; when given, transformers replaces `factor` by maxSeqLen / originalMaxSeqLen and
       * Loom does the same. Absent: the model's maxSeqLen, and `factor` as given.
       */
      readonly originalMaxSeqLen?: number;
      /** Rotations at which the ramp starts (full extrapolation above); 32 when absent. */
      readonly betaFast?: number;
      /** Rotations at which the ramp ends (full interpolation below); 1 when absent. */
      readonly betaSlow?: number;
      /** The factor on cos and sin; absent is computed from factor, mscale and mscaleAllDim. */
      readonly attentionFactor?: number;
      readonly mscale?: number;
      readonly mscaleAllDim?: number;
      /** Round the correction range outwards to whole dimensions; true when absent. */
      readonly truncate?: boolean;
    }
  | {
      readonly type: 'llama3';
      readonly factor: number;
      readonly lowFreqFactor: number;
      readonly highFreqFactor: number;
      readonly originalMaxSeqLen: number;
    };

/** The RoPE scaling types, as in Hugging Face `rope_type`. */
export const ROPE_SCALING_TYPES: readonly RopeScaling['type'][] = ['linear', 'dynamic', 'yarn', 'llama3'];

/** What `rope` rotates by: one inverse frequency per pair and the factor on cos and sin. */
export interface RopeFrequencies {
  readonly inverseFrequencies: readonly number[];
  readonly scale: number;
}

/** The shape of the RoPE a model uses: per-head width, theta, maxSeqLen and the optional scaling. */
export interface RopeSpec {
  readonly headDim: number;
  readonly theta: number;
  readonly maxSeqLen: number;
  readonly scaling?: RopeScaling;
}

function positive(value: unknown): boolean {
  return typeof value === 'number' && value > 0 && Number.isFinite(value);
}

/** Why a RoPE scaling is not one Loom can apply (empty when it is); `maxSeqLen` is the model's. */
export function ropeScalingProblems(scaling: RopeScaling, maxSeqLen: number): string[] {
  const problems: string[] = [];
  const where = `ropeScaling (${scaling.type})`;
  if (!ROPE_SCALING_TYPES.includes(scaling.type)) {
    return [`ropeScaling.type must be one of ${ROPE_SCALING_TYPES.join(', ')}, got ${String(scaling.type)}`];
  }
  if (!(positive(scaling.factor) && scaling.factor >= 1)) {
    problems.push(`${where}: factor must be a number >= 1, got ${scaling.factor}`);
  }
  const original = 'originalMaxSeqLen' in scaling ? scaling.originalMaxSeqLen : undefined;
  if (scaling.type === 'llama3' || original !== undefined) {
    if (!(Number.isInteger(original) && original !== undefined && original >= 1 && original <= maxSeqLen)) {
      problems.push(
        `${where}: originalMaxSeqLen must be an integer in [1, maxSeqLen=${maxSeqLen}], got ${original}`,
      );
    }
  }
  if (scaling.type === 'llama3') {
    const { lowFreqFactor: low, highFreqFactor: high } = scaling;
    if (!(positive(low) && positive(high) && high > low)) {
      problems.push(
        `${where}: lowFreqFactor and highFreqFactor must be positive with highFreqFactor > lowFreqFactor, got ${low} and ${high}`,
      );
    }
  }
  if (scaling.type === 'yarn') {
    for (const key of ['betaFast', 'betaSlow', 'attentionFactor', 'mscale', 'mscaleAllDim'] as const) {
      const value = scaling[key];
      if (value !== undefined && !positive(value)) {
        problems.push(`${where}: ${key} must be a positive number when given, got ${value}`);
      }
    }
    if (scaling.truncate !== undefined && typeof scaling.truncate !== 'boolean') {
      problems.push(`${where}: truncate must be true or false when given, got ${String(scaling.truncate)}`);
    }
  }
  return problems;
}

/** YaRN's magnitude correction 0.1·m·ln(s) + 1 for a scale s > 1, else 1. */
function yarnMscale(scale: number, m = 1): number {
  return scale <= 1 ? 1 : 0.1 * m * Math.log(scale) + 1;
}

/** YaRN: blend of interpolated and extrapolated frequencies by a ramp over the pair index, and its attention factor. */
function yarn(
  base: readonly number[],
  spec: RopeSpec,
  scaling: Extract<RopeScaling, { type: 'yarn' }>,
): RopeFrequencies {
  const { headDim: dim, theta } = spec;
  const original = scaling.originalMaxSeqLen ?? spec.maxSeqLen;
  const factor = scaling.originalMaxSeqLen === undefined ? scaling.factor : spec.maxSeqLen / original;
  const { mscale, mscaleAllDim } = scaling;
  const attention =
    scaling.attentionFactor ??
    (mscale !== undefined && mscaleAllDim !== undefined
      ? yarnMscale(factor, mscale) / yarnMscale(factor, mscaleAllDim)
      : yarnMscale(factor));
  // The dimension whose wavelength makes `rotations` turns over the original context.
  const correctionDim = (rotations: number) =>
    (dim * Math.log(original / (rotations * 2 * Math.PI))) / (2 * Math.log(theta));
  const truncate = scaling.truncate ?? true;
  const lowRaw = correctionDim(scaling.betaFast ?? 32);
  const highRaw = correctionDim(scaling.betaSlow ?? 1);
  const low = Math.max(truncate ? Math.floor(lowRaw) : lowRaw, 0);
  const high = Math.min(truncate ? Math.ceil(highRaw) : highRaw, dim - 1);
  const span = low === high ? 0.001 : high - low;
  const inverseFrequencies = base.map((f, i) => {
    const ramp = Math.min(Math.max((i - low) / span, 0), 1);
    const extrapolation = 1 - ramp;
    return (f / factor) * (1 - extrapolation) + f * extrapolation;
  });
  return { inverseFrequencies, scale: attention };
}

/** Llama 3: long wavelengths interpolated by factor, short ones kept, a smooth blend between. */
function llama3(base: readonly number[], scaling: Extract<RopeScaling, { type: 'llama3' }>): number[] {
  const { factor, lowFreqFactor: low, highFreqFactor: high, originalMaxSeqLen: original } = scaling;
  const lowFreqWavelength = original / low;
  const highFreqWavelength = original / high;
  return base.map((f) => {
    const wavelength = (2 * Math.PI) / f;
    if (wavelength < highFreqWavelength) return f;
    if (wavelength > lowFreqWavelength) return f / factor;
    const smooth = (original / wavelength - low) / (high - low);
    return (1 - smooth) * (f / factor) + smooth * f;
  });
}

/**
 * The inverse frequencies and cos/sin factor of a model's RoPE for a sequence of `seqLen` positions (the last
 * position + 1). Only `dynamic` depends on seqLen: as in transformers, each forward pass uses the frequencies of
 * its own length, so during decode every step recomputes them for offset + T, and keys already in a KV cache keep
 * the rotation they were stored with.
 */
export function ropeFrequencies(spec: RopeSpec, seqLen: number): RopeFrequencies {
  const { headDim: dim, theta, scaling } = spec;
  const base = ropeInverseFrequencies(dim, theta);
  if (scaling === undefined) return { inverseFrequencies: base, scale: 1 };
  switch (scaling.type) {
    case 'linear':
      return { inverseFrequencies: base.map((f) => f / scaling.factor), scale: 1 };
    case 'dynamic': {
      const original = scaling.originalMaxSeqLen ?? spec.maxSeqLen;
      if (seqLen <= original) return { inverseFrequencies: base, scale: 1 };
      const scaledTheta =
        theta * ((scaling.factor * seqLen) / original - (scaling.factor - 1)) ** (dim / (dim - 2));
      return { inverseFrequencies: ropeInverseFrequencies(dim, scaledTheta), scale: 1 };
    }
    case 'yarn':
      return yarn(base, spec, scaling);
    case 'llama3':
      return { inverseFrequencies: llama3(base, scaling), scale: 1 };
  }
}
