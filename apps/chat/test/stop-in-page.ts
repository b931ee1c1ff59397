import type { Page } from 'playwright-core';

/**
 * Stops the next reply from inside the page once it shows more than `tokens` tokens, by its Stop button or by Esc
 * (the window's keydown, which the page listens to), in the same turn of the page's event loop.
 */
export async function stopInPage(page: Page, tokens: number, how: 'button' | 'escape'): Promise<void> {
  await page.evaluate(
    ([count, by]) => {
      const observer = new MutationObserver(() => {
        if (document.querySelectorAll('.streaming .token').length <= count) return;
        observer.disconnect();
        if (by === 'escape') window.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape' }));
        else [...document.querySelectorAll('button')].find((b) => b.textContent?.trim() === 'Stop')?.click();
      });
      observer.observe(document.body, { childList: true, subtree: true });
    },
    [tokens, how] as const,
  );
}
