import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const app = fileURLToPath(new URL('..', import.meta.url));
const helper = fileURLToPath(new URL('pty-session.py', import.meta.url));
const models = fileURLToPath(new URL('../../../../shared/data/models/', import.meta.url));

type Step = { readonly write: string } | { readonly wait: string };

interface Session {
  readonly segments: string[];
  readonly rest: string;
  readonly status: number | null;
  readonly failed: string | null;
}

/** Plays `steps` on `loom chat` (greedy stories260K) in a pseudo-terminal, through the Python helper. */
function chat(steps: readonly Step[], ...flags: string[]): Session {
  const loom = ['node', '--conditions=@loom/source', '--import', 'tsx', 'src/loom.ts', 'chat'];
  const model = [
    '-m',
    `${models}stories260K.bin`,
    '--tokenizer',
    `${models}tok512.bin`,
    '--temperature',
    '0',
  ];
  const run = spawnSync('python3', [helper, JSON.stringify(steps), ...loom, ...model, ...flags], {
    cwd: app,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (run.status !== 0) throw new Error(`the pty helper failed: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

const PROMPT = '\\r*\\n> $';
const CTRL_C = '\u0003';

/** The reply in a segment that ends at the prompt: the text after the echoed message. */
function replyIn(segment: string, message: string): string {
  return segment.slice(segment.indexOf(message) + message.length).replace(/\r/g, '');
}

describe('loom chat on a terminal', () => {
  it('streams a reply, stops it at Ctrl-C, forgets the conversation at /reset, quits at Ctrl-C', () => {
    const message = 'Once upon a time';
    // Replies never end on their own (no EOS, a sliding context): only Ctrl-C stops them.
    const session = chat(
      [
        { wait: PROMPT },
        { write: `${message}\r` },
        { wait: `${message}\\r*\\n[^\\[]{200}` }, // a reply streaming
        { write: CTRL_C },
        { wait: `\\[stopped[^\\]]*\\]${PROMPT}` },
        { write: '/reset\r' },
        { wait: `\\[conversation cleared\\]${PROMPT}` },
        { write: `${message}\r` },
        { wait: `${message}\\r*\\n[^\\[]{200}` },
        { write: CTRL_C },
        { wait: `\\[stopped[^\\]]*\\]${PROMPT}` },
        { write: CTRL_C },
      ],
      ...['-n', '100000', '--ignore-eos', '-c', '64'],
    );
    expect(session.failed).toBe(null);
    expect(session.status).toBe(0);
    const [banner, streaming, stopped, reset, again, againStopped] = session.segments;
    expect(banner).toMatch(/^loom chat: .*stories260K\.bin, plain template/);
    const first = replyIn(streaming, message) + stopped;
    const second = replyIn(again, message) + againStopped;
    // After /reset the same message meets the same empty conversation: greedy gives the same reply.
    expect(second.slice(0, 200)).toBe(first.slice(0, 200));
    expect(first.length).toBeGreaterThan(200);
    expect(reset).toContain('/reset');
  });

  it('continues the conversation without /reset, and takes /system, /help and unknown commands', () => {
    const session = chat(
      [
        { wait: PROMPT },
        { write: 'Hi\r' },
        { wait: PROMPT },
        { write: 'Hi\r' },
        { wait: PROMPT },
        { write: '/system You are a cat.\r' },
        { wait: `\\[system message set; conversation cleared\\]${PROMPT}` },
        { write: '/help\r' },
        { wait: `/reset .*/exit .*${PROMPT}` },
        { write: '/frob\r' },
        { wait: `\\[unknown command /frob; /help lists the commands\\]${PROMPT}` },
        { write: '/exit\r' },
      ],
      ...['-n', '20'],
    );
    expect(session.failed).toBe(null);
    expect(session.status).toBe(0);
    const [, first, second] = session.segments;
    // The second "Hi" follows the first exchange, so its reply differs from the first.
    expect(replyIn(first, 'Hi').trim().length).toBeGreaterThan(0);
    expect(replyIn(second, 'Hi')).not.toBe(replyIn(first, 'Hi'));
  });
});
