import { DEFAULT_WEIGHTS, MODEL_FLAGS, WEIGHTS_MODES } from '@loom/generate/model-flags';
import type { BackendName } from '@loom/generate/open-model';
import type { WeightsMode } from '@loom/models';
import type { SamplerConfig } from '@loom/sampler';
import type { ChatTemplateName } from '@loom/tokenizer';
import { choiceFlag, type FlagSpec, numberFlag, readFlags, UsageError } from '../flags';

/** A parsed `loom chat` command line. */
export type ChatCommand =
  | { readonly kind: 'help' }
  | {
      readonly kind: 'chat';
      readonly model: string;
      readonly tokenizer: string | undefined;
      /** `quantized` keeps the file's blocks for the products to read; `f32` widens them. */
      readonly weights: WeightsMode;
      readonly backend: BackendName;
      readonly threads: number | undefined;
      readonly template: ChatTemplateName;
      readonly system: string | undefined;
      /** Positions of the conversation; undefined: the model's maximum. */
      readonly context: number | undefined;
      readonly maxTokens: number;
      readonly ignoreEos: boolean;
      readonly contextShift: boolean;
      readonly sampling: SamplerConfig;
    };

export const USAGE = `usage: loom chat -m PATH [options]

  -m, --model PATH              the model (any file or directory loom generate reads)
      --tokenizer PATH          tokenizer file (default: the model's own, or one beside it)
      --weights quantized|f32   quantized (default) keeps a GGUF file's Q8_0 / Q4_0 / Q4_K / Q6_K blocks and F16 /
                                BF16 layers as stored, which the products read; f32 widens every weight to float32
      --template NAME           plain, llama2 or chatml (default plain: User: / Assistant: lines)
      --system TEXT             a system message, kept when old turns are dropped
  -c, --context N               positions of the conversation (default: the model's maximum)
  -n, --max-tokens N            tokens per reply at most (default 256)
      --ignore-eos              do not stop a reply at EOS
      --no-context-shift        stop a reply that fills the context instead of sliding the window
      --temperature T           0 is greedy (default 0.8)
      --top-k K --top-p P --min-p P --repetition-penalty R   as loom generate (defaults 0, 0.9, 0, 1)
  -s, --seed S                  seed of the sampler (default: from the clock)
  -t, --threads N               CPU threads of the matrix kernels
      --backend cpu|webgpu      where to run (default cpu)
  -h, --help                    this text

In the chat: /reset starts over, /system TEXT sets the system message (and starts over), /help lists
these, /exit quits. Ctrl-C stops a reply; at the prompt it quits, as Ctrl-D does.`;

const SPEC: FlagSpec = {
  ...MODEL_FLAGS,
  template: { type: 'string' },
  system: { type: 'string' },
  'ignore-eos': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

const TEMPLATES: readonly ChatTemplateName[] = ['plain', 'llama2', 'chatml'];
const BACKENDS: readonly BackendName[] = ['cpu', 'webgpu'];

/** Parses the arguments after `loom chat`. */
export function parseChatArgs(argv: readonly string[]): ChatCommand {
  const flags = readFlags(argv, SPEC, 0);
  if (flags.switches.has('help')) return { kind: 'help' };
  const model = flags.values.get('model');
  if (model === undefined)
    throw new UsageError('--model: required; give the path of a model file or directory');
  const context = flags.values.has('context') ? numberFlag(flags, 'context', 0, true, 1) : undefined;
  const threads = flags.values.has('threads') ? numberFlag(flags, 'threads', 0, true, 1) : undefined;
  return {
    kind: 'chat',
    model,
    tokenizer: flags.values.get('tokenizer'),
    weights: choiceFlag(flags, 'weights', WEIGHTS_MODES, DEFAULT_WEIGHTS),
    backend: choiceFlag(flags, 'backend', BACKENDS, 'cpu'),
    threads,
    template: choiceFlag(flags, 'template', TEMPLATES, 'plain'),
    system: flags.values.get('system'),
    context,
    maxTokens: numberFlag(flags, 'max-tokens', 256, true, 1),
    ignoreEos: flags.switches.has('ignore-eos'),
    contextShift: !flags.switches.has('no-context-shift'),
    sampling: {
      temperature: numberFlag(flags, 'temperature', 0.8),
      topK: numberFlag(flags, 'top-k', 0, true),
      topP: numberFlag(flags, 'top-p', 0.9),
      minP: numberFlag(flags, 'min-p', 0),
      repetitionPenalty: numberFlag(flags, 'repetition-penalty', 1),
      seed: numberFlag(flags, 'seed', Date.now() % 2 ** 31, true),
    },
  };
}
