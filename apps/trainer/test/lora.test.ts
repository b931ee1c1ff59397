import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import { loadCheckpoint, loadLoraAdapter, PEFT_FILES, transformerFromTensors } from '@loom/models';
import { setBackend, tensor } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../src/args';
import { loadRun } from '../src/checkpoint';
import { LORA_DIRS } from '../src/fine-tune';
import { train } from '../src/train';
import { collectingIO, smallCorpus, TINY_QUIET } from './helpers';

function given(argv: string[]) {
  const command = parseArgs(argv, '/');
  if (command.kind !== 'train') throw new Error('expected a train command');
  return command.given;
}

describe('pnpm train --init-from CKPT --lora-rank R', () => {
  it('fine-tunes adapters on a frozen checkpoint: val loss falls, base and optimizer as LoRA says', async () => {
    const { dir, data } = smallCorpus();
    const base = join(dir, 'base');
    const tiny = [...TINY_QUIET, '--preset', 'llama', '--data', data];
    await train(given([...tiny, '--iters', '80', '--out', base]), dir, collectingIO().io);

    const out = join(dir, 'lora');
    const { io, stderr } = collectingIO();
    const flags = [
      '--init-from',
      base,
      '--lora-rank',
      '4',
      '--lora-alpha',
      '8',
      '--lora-targets',
      'wq,wk,wv,wo,w1,w2,w3',
    ];
    const result = await train(
      given([...tiny, ...flags, '--iters', '30', '--lr', '3e-2', '--out', out]),
      dir,
      io,
    );
    expect(stderr.text).toMatch(
      /lora: {2}rank 4, alpha 8, dropout 0 on q_proj, k_proj, v_proj, o_proj, gate_proj, down_proj, up_proj; 1,472 trainable of 7,248 parameters \(25.48% of the base\)/,
    );
    expect(stderr.text).toMatch(
      /optimizer state 0\.01 MB \(full: 0\.04 MB\); training memory about .* MB \(full: /,
    );
    const [first, last] = [result.evals[0], result.evals.at(-1)];
    expect(last?.valLoss).toBeLessThan(first.valLoss);

    // The base weights are saved unchanged; the optimizer holds moments of the 6 adapter tensors only.
    const before = loadCheckpoint(base).tensors;
    expect(loadCheckpoint(out).tensors).toEqual(before);
    const run = loadRun(out);
    expect(run.optimizer.size).toBe(2 * 14);
    // 1 layer x 7 targets, m and v of each: A [4, in] and B [out, 4], the hidden width 64 in or out of w1, w2, w3.
    const shapes = [...run.optimizer.values()].map((t) => t.shape.join('x'));
    const count = (shape: string) => shapes.filter((s) => s === shape).length;
    expect([count('4x16'), count('16x4'), count('4x64'), count('64x4')]).toEqual([12, 10, 2, 4]);

    // The adapter in the PEFT layout, applied to the base, gives the merged export's logits.
    const peft = JSON.parse(readFileSync(join(out, LORA_DIRS.adapter, PEFT_FILES.config), 'utf8'));
    expect(peft).toMatchObject({ peft_type: 'LORA', r: 4, lora_alpha: 8 });
    expect([...peft.target_modules].sort()).toEqual([
      'down_proj',
      'gate_proj',
      'k_proj',
      'o_proj',
      'q_proj',
      'up_proj',
      'v_proj',
    ]);
    setBackend(new CpuBackend());
    const adapted = transformerFromTensors(loadCheckpoint(base));
    const lora = loadLoraAdapter(join(out, LORA_DIRS.adapter), adapted);
    const merged = transformerFromTensors(loadCheckpoint(join(out, LORA_DIRS.merged)));
    const ids = tensor([1, 2, 3, 4, 5, 6, 7, 8], [1, 8], { dtype: 'i32' });
    const [a, b] = [await adapted.forward(ids).data(), await merged.forward(ids).data()];
    expect(Math.max(...a.map((v, i) => Math.abs(v - b[i])))).toBeLessThan(1e-5);
    const mergedWq = loadCheckpoint(join(out, LORA_DIRS.merged)).tensors.find(
      (t) => t.name === 'layers.0.attention.wq.weight',
    );
    expect(mergedWq?.data).not.toEqual(before.find((t) => t.name === 'layers.0.attention.wq.weight')?.data);
    lora.dispose();
    adapted.dispose();
    merged.dispose();
  });

  it('refuses LoRA flags without a rank, and a block past the checkpoint context', async () => {
    const { dir, data } = smallCorpus();
    await expect(
      train(given(['--data', data, ...TINY_QUIET, '--lora-dropout', '0.1']), dir, collectingIO().io),
    ).rejects.toThrow(/--lora-alpha, --lora-dropout and --lora-targets need --lora-rank/);
    const base = join(dir, 'base');
    await train(
      given(['--data', data, ...TINY_QUIET, '--iters', '1', '--out', base]),
      dir,
      collectingIO().io,
    );
    await expect(
      train(
        given([
          '--data',
          data,
          ...TINY_QUIET.map((v, i, all) => (all[i - 1] === '--block' ? '32' : v)),
          '--init-from',
          base,
          '--out',
          join(dir, 'x'),
        ]),
        dir,
        collectingIO().io,
      ),
    ).rejects.toThrow(/reads at most 16 positions \(maxSeqLen\), but --block is 32/);
  });
});
