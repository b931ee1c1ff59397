import { join } from 'node:path';
import { webgpuForTests } from '@loom/webgpu-node';
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../src/args';
import { train } from '../src/train';
import { collectingIO, smallCorpus, TINY_QUIET } from './helpers';

const gpu = await webgpuForTests();

describe.skipIf(gpu === undefined)('WebGPU', () => {
  it('trains with the same losses as the CPU, within float tolerance', async () => {
    const { dir, data } = smallCorpus();
    const run = async (backend: string) => {
      const command = parseArgs(
        ['--data', data, ...TINY_QUIET, '--iters', '4', '--eval-every', '0', '--backend', backend],
        dir,
      );
      if (command.kind !== 'train') throw new Error('expected a train command');
      const result = await train({ ...command.given, out: join(dir, backend) }, dir, collectingIO().io);
      return result.steps.map((s) => s.loss);
    };
    const cpu = await run('cpu');
    const webgpu = await run('webgpu');
    expect(webgpu).toHaveLength(4);
    for (const [i, loss] of webgpu.entries()) expect(loss).toBeCloseTo(cpu[i], 4);
  });
});
