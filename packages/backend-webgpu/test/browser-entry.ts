import { WebGPUBackend } from '../src/index';
import { type CheckResults, runChecks } from './browser-checks';

/** What the page reports back to the Node test. */
export type PageReport =
  | { readonly ok: true; readonly adapter: string; readonly results: CheckResults }
  | { readonly ok: false; readonly error: string };

declare global {
  interface Window {
    loomReport?: Promise<PageReport>;
  }
}

async function adapterName(): Promise<string> {
  const adapter = await navigator.gpu?.requestAdapter();
  if (!adapter) return 'none';
  const { vendor, architecture, description } = adapter.info;
  return [vendor, architecture, description].filter((s) => s !== '').join(' / ');
}

async function report(): Promise<PageReport> {
  try {
    const backend = await WebGPUBackend.create();
    return { ok: true, adapter: await adapterName(), results: await runChecks(backend) };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

window.loomReport = report();
