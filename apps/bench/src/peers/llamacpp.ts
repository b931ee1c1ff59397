import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sharedPeerFile } from '../shared-data';

const run = promisify(execFile);

/** What one llama.cpp run measured. */
export interface PeerRate {
  readonly decodeTokensPerS: number;
  readonly prefillTokensPerS: number | undefined;
}

function numberField(object: object, key: string): number | undefined {
  const value = key in object ? (object as Record<string, unknown>)[key] : undefined;
  return typeof value === 'number' && value > 0 ? value : undefined;
}

/**
 * Greedy decode (and an N-token prefill) of a GGUF by llama.cpp's prebuilt CPU binary through
 * `node-llama-cpp`, installed in `from` (`npm i --prefix DIR node-llama-cpp@3.22.1`), with
 * `shared/peers/llamacpp_peer.mjs`.
 */
export async function llamaCppRate(
  from: string,
  gguf: string,
  threads: number,
  tokens: number,
  prefill: number,
): Promise<PeerRate> {
  const script = sharedPeerFile('llamacpp_peer.mjs');
  if (script === undefined)
    throw new Error('bench generate --llama-cpp: shared/peers/llamacpp_peer.mjs not found');
  const args = [script, '--from', from, '--model', gguf, '--threads', String(threads)];
  args.push('--tokens', String(tokens), '--prefill', String(prefill));
  const { stdout } = await run(process.execPath, args, { maxBuffer: 16 << 20 });
  const line = stdout.trim().split('\n').at(-1) ?? '';
  const parsed: unknown = JSON.parse(line);
  const decode =
    typeof parsed === 'object' && parsed !== null ? numberField(parsed, 'decode_tokens_per_s') : undefined;
  if (decode === undefined || typeof parsed !== 'object' || parsed === null) {
    throw new Error(
      `bench generate --llama-cpp: the peer printed no decode_tokens_per_s: ${line.slice(0, 200)}`,
    );
  }
  return { decodeTokensPerS: decode, prefillTokensPerS: numberField(parsed, 'prefill_tokens_per_s') };
}
