import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sharedPeerFile } from '../shared-data';
import { peerOutput } from './peer-output';

const run = promisify(execFile);

/** Iterations of one PyTorch run; it reports the median after the first 10. */
const TORCH_ITERATIONS = 50;

/**
 * Median ms/iteration of the PyTorch reference trainer on the gpt2 reference configuration:
 * `shared/peers/torch_char_gpt.py --bench-only`, through `torch_env.sh` (torch on OpenBLAS;
 * it installs Debian's torch and unpacks OpenBLAS under /tmp when missing).
 */
export async function torchTrainMs(): Promise<number> {
  const env = sharedPeerFile('torch_env.sh');
  const script = sharedPeerFile('torch_char_gpt.py');
  if (env === undefined || script === undefined) {
    throw new Error(
      'bench train --vs-torch: shared/peers/torch_env.sh and torch_char_gpt.py not found; put the shared folder at ../shared beside the repository',
    );
  }
  const args = [env, '/usr/bin/python3', script, '--bench-only', String(TORCH_ITERATIONS)];
  const { stdout } = await run('bash', args, { maxBuffer: 16 << 20 });
  const output = peerOutput(stdout);
  const ms = output.positive('ms_per_iter_median');
  if (ms === undefined) {
    throw new Error(
      `bench train --vs-torch: torch_char_gpt.py printed no ms_per_iter_median: ${output.line.slice(0, 200)}`,
    );
  }
  return ms;
}
