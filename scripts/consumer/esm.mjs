// The ES module consumer: each package alone where it stands alone, then the stack together.
import assert from 'node:assert/strict';
import * as cpu from '@loom/backend-cpu';
import * as nn from '@loom/nn';
import * as runtime from '@loom/runtime';
import { argmax, Sampler } from '@loom/sampler';
import * as tensor from '@loom/tensor';
import * as tokenizer from '@loom/tokenizer';
import { greedyStory } from './story.mjs';

const bpe = tokenizer.trainBpe('low lower lowest newer newest wider widest '.repeat(4), { vocabSize: 270 });
const text = 'the newest, widest löwer ✓';
assert.equal(bpe.decode(bpe.encode(text)), text, 'tokenizer: a trained BPE round-trips text it never saw');
assert.ok(bpe.encode('lowest').length < 'lowest'.length, 'tokenizer: training learned merges');

const logits = new Float32Array([0.5, 3, -1, 2.5]);
assert.equal(new Sampler({ temperature: 0 }).sample(logits).token, 1, 'sampler: temperature 0 is the argmax');
assert.equal(argmax(logits), 1);
/** @param {number} seed */
function draws(seed) {
  const sampler = new Sampler({ seed });
  return Array.from({ length: 8 }, () => sampler.sample(logits).token);
}
assert.deepEqual(draws(7), draws(7), 'sampler: the same seed gives the same tokens');

const story = await greedyStory({ tensor, cpu, nn, runtime, tokenizer });
console.log(`RESULT ${JSON.stringify(story)}`);
