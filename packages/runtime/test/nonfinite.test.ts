import { CpuBackend } from '@loom/backend-cpu';
import { loadModelFile, transformerFromTensors } from '@loom/models';
import { setBackend } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { TextGenerator } from '../src/index';
import { modelPath, tok512 } from './fixtures';

/** stories260K with one NaN planted in the final norm, past the loader's check, as a broken kernel would leave it. */
function poisoned(): TextGenerator {
  const loaded = loadModelFile(modelPath);
  const norm = loaded.tensors.find((tensor) => tensor.name === 'norm.weight');
  if (norm === undefined) throw new Error(`${modelPath} has no norm.weight`);
  norm.data[7] = Number.NaN;
  setBackend(new CpuBackend());
  return new TextGenerator(transformerFromTensors(loaded, modelPath), tok512());
}

async function drain(events: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of events);
}

describe('non-finite logits while decoding', () => {
  it('stops greedy generation with an error instead of printing <unk> forever', async () => {
    const generator = poisoned();
    await expect(
      drain(
        generator.generate('Once upon a time', { sampling: { temperature: 0 }, stop: { maxNewTokens: 5 } }),
      ),
    ).rejects.toThrow(/the logits hold NaN or \+Infinity \(their sum is NaN\)/);
    generator.model.dispose();
  });

  it('stops sampled generation with an error naming the bad logit', async () => {
    const generator = poisoned();
    await expect(
      drain(
        generator.generate('Once upon a time', {
          sampling: { temperature: 1, seed: 1 },
          stop: { maxNewTokens: 5 },
        }),
      ),
    ).rejects.toThrow(/logits\[0\] is NaN; logits must be finite or -Infinity/);
    generator.model.dispose();
  });
});
