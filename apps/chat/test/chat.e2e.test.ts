import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseModel, saveCheckpoint } from '@loom/models';
import { encodePrompt } from '@loom/runtime';
import { loadTokenizer } from '@loom/tokenizer';
import { type Browser, chromium, type Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelFilesIn, serveChat } from '../src/serve/static-server';
import { CHROMIUM, CHROMIUM_FLAGS, haveChromium } from './chromium';
import { stopInPage } from './stop-in-page';

const APP = join(import.meta.dirname, '..');
const ARTIFACTS = join(APP, 'test-artifacts');
const DATA = join(APP, '../../../shared/data');
const MODEL = join(DATA, 'models/stories260K.bin');
const TOKENIZER = join(DATA, 'models/tok512.bin');

interface GreedyReference {
  readonly prompt: string;
  readonly steps: number;
  readonly prompt_tokens: readonly number[];
  /** The prompt's text followed by the greedy continuation, as llama2.c's run.c prints it. */
  readonly text: string;
}
const golden: { greedy: GreedyReference[] } = JSON.parse(
  readFileSync(join(DATA, 'golden/stories260K.json'), 'utf8'),
);
const [reference] = golden.greedy;

const browserPresent = haveChromium('the chat end-to-end test');
const tok512 = loadTokenizer(readFileSync(TOKENIZER));

/** The messages on the page, oldest first. */
const shownMessages = (page: Page) =>
  page.locator('.message:not(.streaming)').evaluateAll((elements) =>
    elements.map((element) => ({
      role: element.classList.contains('user') ? 'user' : 'assistant',
      text: element.querySelector('.message-text')?.textContent ?? '',
    })),
  );

/** The story a story-mode conversation is: the user's texts joined with a space (unless one has it), replies as is. */
function storyOf(messages: readonly { role: string; text: string }[]): string {
  let story = '';
  for (const { role, text } of messages) {
    const join = role === 'user' && story !== '' && !/\s$/.test(story) && !/^\s/.test(text) ? ' ' : '';
    story += join + text;
  }
  return story;
}

/** What the page keeps in IndexedDB, read directly. */
const savedInBrowser = (page: Page) =>
  page.evaluate(
    () =>
      new Promise<{ title: string; messages: { role: string; text: string; stopped?: string }[] }[]>(
        (resolve, reject) => {
          const open = indexedDB.open('loom-chat');
          open.onerror = () => reject(open.error);
          open.onsuccess = () => {
            const request = open.result.transaction('conversations').objectStore('conversations').getAll();
            request.onsuccess = () => resolve(request.result);
            request.onerror = () => reject(request.error);
          };
        },
      ),
  );

/** Waits for the page to get there (a reply is a few seconds of software rendering). */
const poll = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 60_000, interval: 50 });
const stat = (page: Page, name: string) => page.locator(`[data-stat="${name}"]`);
const lastReply = (page: Page) => page.locator('.message.assistant:not(.streaming) .message-text').last();

async function setControl(page: Page, label: string, value: string): Promise<void> {
  await page.getByLabel(label, { exact: true }).fill(value);
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByLabel('Message', { exact: true }).press('Enter');
}

/** Sends a message and waits for the reply's figures. */
async function sendAndWait(page: Page, text: string): Promise<void> {
  const before = await page.locator('.message.assistant').count();
  await send(page, text);
  await poll(() => page.locator('.message.assistant:not(.streaming)').count()).toBe(before + 1);
  await poll(() => page.getByRole('button', { name: 'Send' }).count()).toBe(1);
}

/**
 * Starts recording the page's main-thread tasks over 50 ms (the Long Tasks API, with the entries buffered before the
 * observer's first callback); the call it returns reads their durations so far.
 */
async function watchLongTasks(page: Page): Promise<() => Promise<number[]>> {
  const supported = await page.evaluate(() => {
    const since = performance.now();
    const seen: number[] = [];
    new PerformanceObserver((list) => {
      for (const task of list.getEntries()) {
        if (task.startTime + task.duration >= since) seen.push(Math.round(task.duration));
      }
    }).observe({ type: 'longtask', buffered: true });
    Object.assign(window, { loomLongTasks: seen });
    return PerformanceObserver.supportedEntryTypes.includes('longtask');
  });
  expect(supported).toBe(true);
  return () => page.evaluate(() => (window as unknown as { loomLongTasks: number[] }).loomLongTasks);
}

/** The heatmap's cells, read from its pixels: how many above the diagonal are not the canvas's background colour. */
function heatmapCells(canvas: HTMLCanvasElement) {
  const [n, cell, left, top] = ['cells', 'cell', 'left', 'top'].map((name) => Number(canvas.dataset[name]));
  const background = (getComputedStyle(canvas).backgroundColor.match(/\d+/g) ?? []).map(Number);
  const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
  const isBackground = (x: number, y: number) =>
    [0, 1, 2].every((c) => data[(y * canvas.width + x) * 4 + c] === background[c]);
  const cellIsBackground = (row: number, column: number) => {
    for (let y = top + row * cell; y < top + (row + 1) * cell; y++) {
      for (let x = left + column * cell; x < left + (column + 1) * cell; x++)
        if (!isBackground(x, y)) return false;
    }
    return true;
  };
  let filledAbove = 0;
  let emptyRows = 0;
  let filledBelow = 0;
  for (let row = 0; row < n; row++) {
    for (let column = row + 1; column < n; column++) if (!cellIsBackground(row, column)) filledAbove++;
    let filled = 0;
    for (let column = 0; column <= row; column++) if (!cellIsBackground(row, column)) filled++;
    if (filled === 0) emptyRows++;
    filledBelow += filled;
  }
  return { n, cornerIsBackground: isBackground(0, 0), filledAbove, emptyRows, filledBelow };
}

describe.skipIf(!browserPresent)('the chat page in headless Chromium', () => {
  const dir = mkdtempSync(join(tmpdir(), 'loom-chat-e2e-'));
  let server: Server;
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    await build({ root: APP, logLevel: 'error', build: { outDir: join(dir, 'dist'), emptyOutDir: true } });
    server = await serveChat({ root: join(dir, 'dist') });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('the test server has no TCP port');
    origin = `http://127.0.0.1:${address.port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('loads the checkpoint the server offers under /model/ at once (pnpm start)', async () => {
    const checkpoint = join(dir, 'checkpoint');
    saveCheckpoint(checkpoint, {
      ...parseModel(readFileSync(MODEL), undefined),
      tokenizerJson: JSON.stringify(loadTokenizer(readFileSync(TOKENIZER)).toJSON()),
    });
    const served = await serveChat({ root: join(dir, 'dist'), modelFiles: modelFilesIn(checkpoint) });
    const address = served.address();
    if (address === null || typeof address === 'string') throw new Error('the test server has no TCP port');
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`http://127.0.0.1:${address.port}/?backend=cpu`);
      await poll(() => page.locator('.model-info').textContent()).toContain(
        'model.safetensors, tokenizer.json, config.json',
      );
      expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
      await setControl(page, 'Temperature', '0');
      await setControl(page, 'Repetition penalty', '1');
      await setControl(page, 'Max tokens', '30');
      await sendAndWait(page, reference.prompt);
      expect(reference.text.startsWith(reference.prompt + (await lastReply(page).textContent()))).toBe(true);
    } finally {
      await context.close();
      served.close();
    }
  });

  it("refuses a model too large for the adapter's limits or the memory limit, saying what to do", async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${origin}/?adapter-limit=100000`);
      await page.locator('[data-stat="backend"]', { hasText: /^webgpu / }).waitFor();
      await page.getByLabel('Model files').setInputFiles([MODEL, TOKENIZER]);
      await poll(() => page.getByRole('alert').textContent()).toContain(
        'stories260K.bin, tok512.bin: the weight tok_embeddings.weight [512, 64] float32 takes 131072 bytes (0.0 GiB), ' +
          "more than the WebGPU adapter's maxStorageBufferBindingSize (capped by ?adapter-limit) of 100000 bytes",
      );
      expect(await page.getByRole('alert').textContent()).toContain(
        'run on the CPU backend (open the page with ?backend=cpu)',
      );
      expect(await page.locator('.model-info').textContent()).toBe('No model loaded.');

      await page.goto(`${origin}/?backend=cpu&memory-limit=2000000`);
      await page.getByLabel('Model files').setInputFiles([MODEL, TOKENIZER]);
      await poll(() => page.getByRole('alert').textContent()).toMatch(
        /a context of 512 positions is too large beside the weights' .* Set Context to \d+ positions or fewer in the Model panel/,
      );
      const fits = Number((await page.getByRole('alert').textContent())?.match(/Set Context to (\d+)/)?.[1]);
      expect(fits).toBeGreaterThan(0);
      expect(fits).toBeLessThan(512);
      await page.getByLabel("Context (positions; empty: the model's maxSeqLen)").fill(String(fits));
      await page.getByLabel('Model files').setInputFiles([MODEL, TOKENIZER]);
      await poll(() => page.locator('.model-info').textContent()).toContain('stories260K.bin');
      await setControl(page, 'Max tokens', '8');
      await sendAndWait(page, reference.prompt);
      expect(await stat(page, 'context').textContent()).toMatch(new RegExp(`^\\d+ / ${fits}$`));
    } finally {
      await context.close();
    }
  });

  it('a page closed mid-reply ends its worker; another page of the origin sees the conversation whole or not at all', async () => {
    const context = await browser.newContext();
    try {
      const [closing, other] = [await context.newPage(), await context.newPage()];
      const errors: string[] = [];
      other.on('pageerror', (error) => errors.push(error.message)); // unhandled errors and rejections
      await other.goto(`${origin}/?backend=cpu`);
      await closing.goto(`${origin}/?backend=cpu`);
      await closing.getByLabel('Model files').setInputFiles([MODEL, TOKENIZER]);
      await poll(() => closing.locator('.model-info').textContent()).toContain('stories260K.bin');
      await setControl(closing, 'Max tokens', '400');
      const prompt = 'The tab that closed';
      await send(closing, prompt);
      await poll(() => closing.locator('.streaming .token').count()).toBeGreaterThan(5);
      const closed = closing.waitForEvent('close');
      await closing.close({ runBeforeUnload: true }); // as a user closes it: pagehide runs
      await closed;
      await other.reload();
      await other.locator('.conversations').waitFor({ state: 'attached' });
      const mine = (await savedInBrowser(other)).filter((conversation) => conversation.title === prompt);
      console.info(
        `closed mid-reply: the conversation was ${mine.length > 0 ? 'saved, stopped' : 'not saved'}`,
      );
      for (const { messages } of mine) {
        expect(messages.map(({ role }) => role)).toEqual(['user', 'assistant']);
        expect(messages[0].text).toBe(prompt);
        expect(messages[1].stopped).toBe('page closed');
      }
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  for (const backend of ['webgpu', 'cpu'] as const) {
    describe(`on ${backend}`, () => {
      let page: Page;
      /** Conversations the stop test started: a sampled story may reach its end before the stop lands, and is retried. */
      let stopConversations = 0;

      beforeAll(async () => {
        const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
        page = await context.newPage();
        page.on('pageerror', (error) => console.error(`page error: ${error.message}`));
        await page.goto(`${origin}/?test-hooks${backend === 'cpu' ? '&backend=cpu' : ''}`);
        await page.locator('[data-stat="backend"]', { hasText: /^(webgpu|cpu) / }).waitFor();
      });

      afterAll(() => page?.context().close());

      it(`runs on ${backend}${backend === 'cpu' ? ' with the fallback notice' : ''}`, async () => {
        expect(await stat(page, 'backend').textContent()).toMatch(new RegExp(`^${backend} \\(`));
        const notice = page.locator('.backend-notice');
        if (backend === 'cpu')
          expect(await notice.textContent()).toContain('WebGPU is turned off by ?backend=cpu');
        else expect(await notice.count()).toBe(0);
      });

      it("shows the library's error for each file that is not a model, and loads a good one after them", async () => {
        const binary = (name: string, buffer: Buffer) => ({
          name,
          mimeType: 'application/octet-stream',
          buffer,
        });
        const model = readFileSync(MODEL);
        const tokenizer = binary('tok512.bin', readFileSync(TOKENIZER));
        const random = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 2654435761) >>> 24));
        const cases = [
          {
            files: [binary('random.bin', random), tokenizer],
            error: 'random.bin: not a model file Loom recognises',
          },
          {
            files: [{ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('these are my notes') }],
            error: 'notes.txt: not a model file Loom recognises',
          },
          {
            files: [binary('stories260K.bin', model.subarray(0, 5000)), tokenizer],
            error: `stories260K.bin: header says`,
            also: 'the file is truncated',
          },
          {
            files: [binary('model.bin', readFileSync(TOKENIZER)), tokenizer],
            error: 'model.bin: not a model file',
          },
        ];
        for (const { files, error, also } of cases) {
          await page.getByLabel('Model files').setInputFiles(files);
          await poll(() => page.getByRole('alert').textContent()).toContain(error);
          if (also) expect(await page.getByRole('alert').textContent()).toContain(also);
          expect(await page.locator('.model-info').textContent()).toBe('No model loaded.');
        }
        // Still usable: a good model loads and answers.
        await page.getByLabel('Model files').setInputFiles([MODEL, TOKENIZER]);
        await poll(() => page.locator('.model-info').textContent()).toContain('stories260K.bin');
        expect(await page.getByRole('alert').count()).toBe(0);
      });

      it('streams the golden greedy continuation of "Once upon a time" from stories260K + tok512', async () => {
        await page.getByLabel('Model files').setInputFiles([MODEL, TOKENIZER]);
        await poll(() => page.locator('.model-info').textContent()).toContain('stories260K.bin');
        await setControl(page, 'Temperature', '0');
        await setControl(page, 'Repetition penalty', '1'); // plain greedy, as the reference
        // run.c runs `steps` positions: the prompt, then a new token from each position after it.
        await setControl(page, 'Max tokens', String(reference.steps - reference.prompt_tokens.length + 1));
        const longTasks = await watchLongTasks(page);
        await sendAndWait(page, reference.prompt);
        // The page never froze while the reply streamed: no main-thread task over 50 ms.
        expect(await longTasks()).toEqual([]);
        expect(await stat(page, 'stop-reason').textContent()).toBe('max-tokens');
        expect(reference.prompt + (await lastReply(page).textContent())).toBe(reference.text);
        // Streamed token by token, each with the sampler's alternatives on hover.
        const tokens = lastReply(page).locator('.token');
        expect(await tokens.count()).toBeGreaterThan(100);
        expect(await tokens.nth(3).getAttribute('title')).toMatch(/%/);
      });

      it('shows the attention of the last reply as a heatmap: empty above the diagonal, the value under the pointer', async () => {
        await page.locator('.attention summary').click();
        await page.getByLabel('Layer', { exact: true }).selectOption('4');
        await page.getByLabel('Head', { exact: true }).selectOption('3');
        // The prompt (with BOS) and the reply: `steps` positions and the last token generated.
        const tokens = reference.steps + 1;
        const canvas = page.getByRole('img', {
          name: new RegExp(`^Attention heatmap of layer 4, head 3, over ${tokens} tokens`),
        });
        await canvas.waitFor();
        for (const scheme of ['light', 'dark'] as const) {
          await page.emulateMedia({ colorScheme: scheme });
          await poll(() => canvas.evaluate(heatmapCells).then((cells) => cells.cornerIsBackground)).toBe(
            true,
          );
          const cells = await canvas.evaluate(heatmapCells);
          expect(cells).toMatchObject({ n: tokens, filledAbove: 0, emptyRows: 0 });
          expect(cells.filledBelow).toBeGreaterThan(tokens);
          await page
            .locator('.attention')
            .screenshot({ path: join(ARTIFACTS, `attention-${backend}-${scheme}.png`) });
        }
        await page.emulateMedia({ colorScheme: 'light' });
        const box = await canvas.boundingBox();
        if (box === null) throw new Error('the heatmap canvas is not laid out');
        const at = await canvas.evaluate((element: HTMLCanvasElement) => ({
          width: element.width,
          cell: Number(element.dataset.cell),
          left: Number(element.dataset.left),
          top: Number(element.dataset.top),
        }));
        const scale = box.width / at.width;
        const pointAt = (row: number, column: number) =>
          page.mouse.move(
            box.x + (at.left + (column + 0.5) * at.cell) * scale,
            box.y + (at.top + (row + 0.5) * at.cell) * scale,
          );
        await pointAt(10, 3);
        await poll(() => page.locator('.attention-value').textContent()).toMatch(
          /^".*" \(10\) → ".*" \(3\): [01]\.\d{4}$/,
        );
        await pointAt(3, 10);
        await poll(() => page.locator('.attention-value').textContent()).toMatch(
          /\(3\) → .* \(10\): 0 \(a later token: masked\)$/,
        );
      });

      it('prefills only the new turn of a conversation', async () => {
        const before = Number(
          await stat(page, 'context')
            .textContent()
            .then((text) => text?.split(' / ')[0]),
        );
        await setControl(page, 'Max tokens', '20');
        await sendAndWait(page, 'The next day');
        const reused = Number(await stat(page, 'reused').textContent());
        const prefilled = Number(await stat(page, 'prefilled').textContent());
        // The cache held the whole first turn but the last generated token; the new text is a few tokens.
        expect(reused).toBeGreaterThanOrEqual(before - 1);
        expect(prefilled).toBeGreaterThan(0);
        expect(prefilled).toBeLessThanOrEqual(6);
      });

      it('reuses the cache across the turns of a plain chat (the runtime ChatSession)', async () => {
        await page.getByLabel('Prompt format (starts a new chat)').selectOption('plain');
        await setControl(page, 'Max tokens', '20');
        await sendAndWait(page, 'Tell me a story.');
        const before = Number(
          await stat(page, 'context')
            .textContent()
            .then((text) => text?.split(' / ')[0]),
        );
        await sendAndWait(page, 'What happened next?');
        const reused = Number(await stat(page, 'reused').textContent());
        const prefilled = Number(await stat(page, 'prefilled').textContent());
        console.info(
          `plain chat, second turn: ${reused} tokens reused of ${before} cached, ${prefilled} prefilled`,
        );
        expect(reused).toBeGreaterThan(0);
        expect(prefilled).toBeLessThan(before);
        await page.getByLabel('Prompt format (starts a new chat)').selectOption('story');
      });

      it('stops a long reply at once with the Stop button and with Esc', async () => {
        for (const how of ['button', 'escape'] as const) {
          // The stop comes from inside the page as the sixth token shows: a round trip to the test took longer
          // than a fast model's whole short story. A sampled story can still end (EOS) first: then try a new one.
          let reason: string | null = null;
          for (let attempt = 0; attempt < 5 && reason !== 'aborted'; attempt++) {
            await page.getByRole('button', { name: 'New chat' }).click();
            stopConversations += 1;
            await setControl(page, 'Temperature', '0.8');
            await setControl(page, 'Max tokens', '400');
            await stopInPage(page, 5, how);
            await send(page, 'Once upon a time');
            await poll(() => page.getByRole('button', { name: 'Send' }).count()).toBe(1);
            expect(await page.locator('.streaming').count()).toBe(0);
            await poll(() => stat(page, 'stop-reason').textContent()).toMatch(/^(aborted|eos)$/);
            reason = await stat(page, 'stop-reason').textContent();
          }
          expect(reason, `${how}: every sampled story ended before the stop`).toBe('aborted');
          const stopped = await lastReply(page).textContent();
          expect(Number(await stat(page, 'generated').textContent())).toBeLessThan(400);
          expect(await lastReply(page).textContent()).toBe(stopped);
          expect(await page.locator('.stopped').last().textContent()).toBe('(stopped)');
        }
      });

      it('saves light and dark screenshots, and fits a 400 px wide screen', async () => {
        for (const scheme of ['light', 'dark'] as const) {
          await page.emulateMedia({ colorScheme: scheme });
          await page.screenshot({ path: join(ARTIFACTS, `chat-${backend}-${scheme}.png`), fullPage: true });
        }
        await page.setViewportSize({ width: 400, height: 800 });
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(400);
        await page.screenshot({ path: join(ARTIFACTS, `chat-${backend}-400px.png`), fullPage: true });
      });

      if (backend === 'webgpu') {
        it('stops a reply cleanly when the WebGPU device is lost, moves to the CPU and goes on there', async () => {
          await page.getByRole('button', { name: 'New chat' }).click();
          await setControl(page, 'Temperature', '0.8');
          await setControl(page, 'Max tokens', '400');
          await send(page, 'Once upon a time');
          await poll(() => page.locator('.streaming .token').count()).toBeGreaterThan(5);
          await page.evaluate(() =>
            (window as unknown as { loomChatTest: { loseDevice(): void } }).loomChatTest.loseDevice(),
          );
          await poll(() => page.locator('.stopped').last().textContent()).toBe('(device lost)');
          expect(await page.locator('.streaming').count()).toBe(0);
          expect(await page.locator('.notice:not(.backend-notice)').textContent()).toContain(
            'The WebGPU device was lost while the model was writing',
          );
          await poll(() => stat(page, 'backend').textContent()).toMatch(/^cpu \(/);
          expect(await page.locator('.backend-notice').textContent()).toMatch(
            /^The WebGPU device was lost \(.+\); running on the CPU from now on\.$/,
          );
          expect(await page.getByRole('alert').count()).toBe(0);
          // The next message works on the CPU, and the model read the interrupted turn again first.
          await setControl(page, 'Temperature', '0');
          await setControl(page, 'Max tokens', '10');
          await sendAndWait(page, 'The next day');
          expect(await stat(page, 'stop-reason').textContent()).toBe('max-tokens');
          const story = storyOf(await shownMessages(page).then((messages) => messages.slice(0, -1)));
          expect(Number(await stat(page, 'reused').textContent())).toBe(0);
          expect(Number(await stat(page, 'prefilled').textContent())).toBe(
            encodePrompt(tok512, story).length,
          );
        });
      }

      it('finds the conversations again after a reload, and the next turn reads them again', async () => {
        const shown = await page.locator('.message').allTextContents();
        const before = await shownMessages(page);
        await page.reload();
        await poll(() => page.locator('.message').allTextContents()).toEqual(shown);
        // The golden story, the plain chat and the stop test's stories (and the one the lost device stopped).
        expect(await page.locator('.conversations li').count()).toBe(
          2 + stopConversations + (backend === 'webgpu' ? 1 : 0),
        );
        // The model starts with an empty cache: continuing prefills the restored turns with the new text.
        await page.getByLabel('Model files').setInputFiles([MODEL, TOKENIZER]);
        await poll(() => page.locator('.model-info').textContent()).toContain('stories260K.bin');
        await setControl(page, 'Temperature', '0');
        await setControl(page, 'Max tokens', '10');
        await sendAndWait(page, 'Then they went home.');
        const messages = await shownMessages(page);
        expect(messages.slice(0, -2)).toEqual(before);
        const story = storyOf(messages.slice(0, -1));
        expect(Number(await stat(page, 'reused').textContent())).toBe(0);
        expect(Number(await stat(page, 'prefilled').textContent())).toBe(encodePrompt(tok512, story).length);
      });
    });
  }
});
