// The page's entry, bundled by Vite: the greedy story in the browser, reported in #result.
import * as cpu from '@loom/backend-cpu';
import * as nn from '@loom/nn';
import * as runtime from '@loom/runtime';
import * as tensor from '@loom/tensor';
import * as tokenizer from '@loom/tokenizer';
import { greedyStory } from './story.mjs';

const out = document.getElementById('result');
if (!out) throw new Error('the page has no #result element');
greedyStory({ tensor, cpu, nn, runtime, tokenizer }).then(
  (story) => {
    out.textContent = `RESULT ${JSON.stringify(story)}`;
  },
  (error) => {
    out.textContent = `ERROR ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
  },
);
