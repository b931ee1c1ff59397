import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sharedPeerFile } from '../shared-data';
import { peerOutput } from './peer-output';

const run = promisify(execFile);

/** What one llama.cpp run measured. */
export interface PeerRate {
  readonly decodeTokensPerS: number;
  readonly prefillTokensPerS: number | undefined;
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
  const output = peerOutput(stdout);
  const decode = output.positive('decode_tokens_per_s');
  if (decode === undefined) {
    throw new Error(
      `bench generate --llama-cpp: the peer printed no decode_tokens_per_s: ${output.line.slice(0, 200)}`,
    );
  }
  return { decodeTokensPerS: decode, prefillTokensPerS: output.positive('prefill_tokens_per_s') };
}
