import { MambaLM, makeConfig, mambaParameterCount, parameterCount, TransformerLM } from '@loom/nn';
import { useTrainingBackend } from '../backend';
import { type DecodeCost, decodeCost } from '../decode-timing';
import type { Experiment, ExperimentContext } from '../experiment';
import { mambaStepper } from '../mamba-stepper';
import { matchingMamba } from '../matching-mamba';
import { randomIds } from '../random-ids';
import { Report } from '../report';
import { transformerStepper } from '../transformer-stepper';

/** Rounds of every measurement; the report shows each one's median. */
const ROUNDS = 3;

const SIZES = {
  default: {
    dim: 128,
    heads: 4,
    layers: 4,
    contexts: [64, 128, 256, 512, 1024, 2048],
    steps: 32,
    vocab: 256,
  },
  quick: { dim: 16, heads: 2, layers: 1, contexts: [8, 16], steps: 2, vocab: 32 },
} as const;

async function run(context: ExperimentContext): Promise<Report> {
  const size = SIZES[context.scale];
  useTrainingBackend();
  const longest = Math.max(...size.contexts);
  const capacity = longest + size.steps + 1;
  const llamaConfig = makeConfig('llama', {
    vocabSize: size.vocab,
    dim: size.dim,
    numLayers: size.layers,
    numHeads: size.heads,
    maxSeqLen: capacity,
  });
  const mambaConfig = matchingMamba(size.vocab, size.dim, parameterCount(llamaConfig), 4 * size.layers);
  const depth = mambaConfig.numLayers;
  const transformer = new TransformerLM(llamaConfig, { seed: context.seed });
  const mamba = new MambaLM(mambaConfig, { seed: context.seed });
  transformer.eval();
  mamba.eval();
  const tokens = randomIds(capacity, size.vocab, context.seed);
  const subjects = [
    {
      label: `transformer (KV cache), ${parameterCount(llamaConfig)} parameters`,
      make: () => transformerStepper(transformer, capacity),
    },
    {
      label: `Mamba (recurrent state), ${mambaParameterCount(mambaConfig)} parameters`,
      make: () => mambaStepper(mamba),
    },
  ];
  // Warm-up: compile every kernel once before timing.
  for (const s of subjects) await decodeCost(s.make, tokens, size.contexts[0], size.steps);
  // Three rounds; in each, both models at each length one after the other, so a slow moment of the machine
  // hits both. Each figure is the median of its three.
  const rounds: DecodeCost[][][] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const costs: DecodeCost[][] = subjects.map(() => []);
    for (const length of size.contexts) {
      for (const [i, s] of subjects.entries())
        costs[i].push(await decodeCost(s.make, tokens, length, size.steps));
    }
    rounds.push(costs);
    context.log(`context: round ${round + 1} of ${ROUNDS} done`);
  }
  const costs = subjects.map((_, i) =>
    size.contexts.map((_, j) => {
      const runs = rounds.map((r) => r[i][j]).sort((a, b) => a.msPerToken - b.msPerToken);
      return runs[Math.floor(runs.length / 2)];
    }),
  );
  transformer.dispose();
  mamba.dispose();
  const report = new Report('Context length: transformer KV cache vs Mamba state');
  report.paragraph(
    `A llama-style transformer (dim ${size.dim}, ${size.layers} layers, ${size.heads} heads) and a Mamba of the same width with ${depth} layers (the depth closest in parameters), untrained: cost does not depend on the weights. ` +
      `For each context length the model prefills that many tokens, then decodes ${size.steps} tokens one at a time (after one untimed step), reading the logits back each step; the figure is the median of ${ROUNDS} rounds in which the two models took turns. ` +
      'Memory is the per-sequence state after decoding: the keys and values written (float32) or the fixed recurrent state. Times are from this machine in this window.',
  );
  report.heading('Result');
  const [kv, ssm] = costs;
  const first = 0;
  const last = size.contexts.length - 1;
  const grows = (c: readonly DecodeCost[]) => c[last].msPerToken / c[first].msPerToken;
  report.paragraph(
    [
      `From context ${size.contexts[first]} to ${size.contexts[last]}, the transformer's state grew from ${kv[first].stateBytes} to ${kv[last].stateBytes} bytes (${(kv[last].stateBytes / kv[first].stateBytes).toFixed(1)}×) and Mamba's stayed ${ssm[last].stateBytes === ssm[first].stateBytes ? `at ${ssm[last].stateBytes} bytes` : `between ${ssm[first].stateBytes} and ${ssm[last].stateBytes} bytes`}.`,
      `Decode time per token changed ${grows(kv).toFixed(2)}× for the transformer (${kv[first].msPerToken.toFixed(2)} → ${kv[last].msPerToken.toFixed(2)} ms) and ${grows(ssm).toFixed(2)}× for Mamba (${ssm[first].msPerToken.toFixed(2)} → ${ssm[last].msPerToken.toFixed(2)} ms).`,
      kv[last].msPerToken > ssm[last].msPerToken
        ? `At ${size.contexts[last]} tokens Mamba decoded faster (${(kv[last].msPerToken / ssm[last].msPerToken).toFixed(2)}× the transformer's speed).`
        : `At ${size.contexts[last]} tokens the transformer still decoded faster (${(ssm[last].msPerToken / kv[last].msPerToken).toFixed(2)}× Mamba's speed): at this size attention over the cache is not yet the dominant cost.`,
    ].join(' '),
  );
  report.table(
    ['context', ...subjects.flatMap((s) => [`${s.label}: ms/token`, 'state bytes'])],
    size.contexts.map((length, i) => [
      length,
      ...costs.flatMap((c) => [c[i].msPerToken.toFixed(3), c[i].stateBytes]),
    ]),
  );
  report.chart('state-bytes', {
    title: 'Per-sequence state against context length',
    xLabel: 'context (tokens)',
    yLabel: 'state (KiB)',
    series: subjects.map((s, i) => ({
      label: s.label,
      points: costs[i].map((c) => ({ x: c.context, y: c.stateBytes / 1024 })),
    })),
  });
  report.chart('decode-time', {
    title: 'Decode time per token against context length',
    xLabel: 'context (tokens)',
    yLabel: 'ms per token',
    series: subjects.map((s, i) => ({
      label: s.label,
      points: costs[i].map((c) => ({ x: c.context, y: c.msPerToken })),
    })),
  });
  return report;
}

export const contextExperiment: Experiment = {
  name: 'context',
  description: 'memory and decode time per token against context length: transformer KV cache vs Mamba state',
  run,
};
