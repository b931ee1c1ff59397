import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, type ServeCommand } from '@loom/server/args';
import { loadServedModel, type ServedModel } from '@loom/server/load';
import { LoomServer } from '@loom/server/server';
import { type Browser, chromium, type Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_FLAGS, haveChromium } from './chromium';
import { stopInPage } from './stop-in-page';

const APP = join(import.meta.dirname, '..');
const ARTIFACTS = join(APP, 'test-artifacts');
const MODELS = join(APP, '../../../shared/data/models');
const KEY = 'e2e-key';
const MODEL = 'stories260K.bin';
const PROMPT = 'Once upon a time';

const poll = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 60_000, interval: 50 });
const stat = (page: Page, name: string) => page.locator(`[data-stat="${name}"]`);
const lastReply = (page: Page) => page.locator('.message.assistant:not(.streaming) .message-text').last();
const alert = (page: Page) => page.locator('.error[role="alert"]');

async function setControl(page: Page, label: string, value: string): Promise<void> {
  await page.getByLabel(label, { exact: true }).fill(value);
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByLabel('Message', { exact: true }).press('Enter');
}

describe.skipIf(!haveChromium('the server-mode end-to-end test'))(
  'the chat page served by pnpm serve',
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'loom-chat-server-e2e-'));
    let served: ServedModel;
    let server: LoomServer;
    let browser: Browser;
    let origin: string;
    let page: Page;

    /** What the server itself answers, whole, for these messages and the parameters the page sends. */
    async function serverReply(messages: readonly { role: string; content: string }[], maxTokens: number) {
      const response = await fetch(`${origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          model: MODEL,
          messages,
          temperature: 0,
          top_p: 0.95,
          frequency_penalty: 0,
          presence_penalty: 0,
          max_tokens: maxTokens,
          seed: 0,
        }),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as {
        choices: { message: { content: string }; finish_reason: string }[];
        usage: { completion_tokens: number };
      };
    }

    const running = async () =>
      ((await (await fetch(`${origin}/health`)).json()) as { running: number }).running;

    beforeAll(async () => {
      await build({ root: APP, logLevel: 'error', build: { outDir: join(dir, 'dist'), emptyOutDir: true } });
      const args = ['--model', join(MODELS, MODEL), '--tokenizer', join(MODELS, 'tok512.bin')];
      served = await loadServedModel(parseArgs(args, {}) as ServeCommand, {});
      server = new LoomServer(served, { apiKey: KEY, appDir: join(dir, 'dist') });
      const { port } = await server.listen(0, '127.0.0.1');
      origin = `http://127.0.0.1:${port}`;
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
      page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
      page.on('pageerror', (error) => console.error(`page error: ${error.message}`));
      mkdirSync(ARTIFACTS, { recursive: true });
    });

    afterAll(async () => {
      await browser?.close();
      await server?.close();
      served?.model.dispose();
      rmSync(dir, { recursive: true, force: true });
    });

    it('opens from the server cross-origin isolated, in server mode at its own origin, and shows its 401s', async () => {
      await page.goto(`${origin}/?backend=cpu`);
      expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
      expect(await page.getByLabel('Server URL').inputValue()).toBe(origin);
      // It connected by itself, without a key: the server's error object is shown.
      await poll(() => alert(page).textContent()).toContain(
        'Server error 401 (invalid_api_key): no API key given',
      );
      await page.getByLabel('API key (optional)').fill('wrong');
      await page.getByRole('button', { name: 'Connect' }).click();
      await poll(() => alert(page).textContent()).toContain(
        'Server error 401 (invalid_api_key): the API key is wrong',
      );
      await page.getByLabel('API key (optional)').fill(KEY);
      await page.getByRole('button', { name: 'Connect' }).click();
      await poll(() => page.locator('.model-info').textContent()).toBe(
        `Connected to ${origin}/v1: ${MODEL}; replies come from the server.`,
      );
      expect(await alert(page).count()).toBe(0);
      expect(await page.getByLabel('Server model').inputValue()).toBe(MODEL);
      expect(await page.getByLabel('Top-k', { exact: true }).isDisabled()).toBe(true);
    });

    it("streams the server's own greedy reply to the same messages", async () => {
      await setControl(page, 'Temperature', '0');
      await setControl(page, 'Max tokens', '60');
      await send(page, PROMPT);
      await poll(() => page.locator('.message.assistant:not(.streaming)').count()).toBe(1);
      const expected = await serverReply([{ role: 'user', content: PROMPT }], 60);
      const text = expected.choices[0].message.content;
      expect(text.length).toBeGreaterThan(20);
      expect(await lastReply(page).textContent()).toBe(text);
      expect(await lastReply(page).locator('.token').count()).toBeGreaterThan(10); // streamed, chunk by chunk
      expect(await stat(page, 'stop-reason').textContent()).toBe(expected.choices[0].finish_reason);
      expect(await stat(page, 'generated').textContent()).toBe(String(expected.usage.completion_tokens));
      expect(await stat(page, 'ttft').textContent()).toMatch(/^\d+ ms$/);
      expect(await stat(page, 'decode-speed').textContent()).toMatch(/^\d+\.\d tok\/s$/);
    });

    it('stops a long reply at once, and the server drops its sequence', async () => {
      await page.getByRole('button', { name: 'New chat' }).click();
      await setControl(page, 'Temperature', '0.8');
      await setControl(page, 'Max tokens', '400');
      // Stopped from inside the page as the sixth token shows: a round trip to the test can outlast the reply.
      await stopInPage(page, 5, 'button');
      await send(page, PROMPT);
      await poll(() => page.getByRole('button', { name: 'Send' }).count()).toBe(1);
      expect(await page.locator('.streaming').count()).toBe(0);
      const stopped = await lastReply(page).textContent();
      expect(await page.locator('.stopped').last().textContent()).toBe('(stopped)');
      expect(await stat(page, 'stop-reason').textContent()).toBe('aborted');
      await poll(running).toBe(0);
      expect(Number(await stat(page, 'generated').textContent())).toBeLessThan(400);
      expect(await lastReply(page).textContent()).toBe(stopped);
    });

    it('frees the server slot when a tab closes mid-reply', async () => {
      const closing = await browser.newPage();
      await closing.goto(`${origin}/?backend=cpu`);
      await closing.getByLabel('API key (optional)').fill(KEY);
      await closing.getByRole('button', { name: 'Connect' }).click();
      await poll(() => closing.locator('.model-info').textContent()).toContain(
        'replies come from the server',
      );
      await setControl(closing, 'Temperature', '0.8');
      await setControl(closing, 'Max tokens', '400');
      await send(closing, PROMPT);
      await poll(() => closing.locator('.streaming .token').count()).toBeGreaterThan(5);
      expect(await running()).toBe(1);
      await closing.close({ runBeforeUnload: true });
      await poll(running).toBe(0);
      // The server still answers.
      const after = await serverReply([{ role: 'user', content: PROMPT }], 5);
      expect(after.choices[0].finish_reason).toBe('length');
    });

    it("shows the server's error for a request it refuses", async () => {
      await page.getByRole('button', { name: 'New chat' }).click();
      await setControl(page, 'Max tokens', '1000');
      await send(page, PROMPT);
      await poll(() => alert(page).textContent()).toContain(
        "Server error 400 (context_length_exceeded): this model's maximum context length is 512 tokens",
      );
      expect(await page.locator('.stopped').last().textContent()).toBe('(error)');
      expect(await page.getByRole('button', { name: 'Send' }).count()).toBe(1);
      await page.screenshot({ path: join(ARTIFACTS, 'chat-server-mode.png'), fullPage: true });
    });
  },
);
