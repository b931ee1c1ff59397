import { signal } from '@preact/signals';
import type { ModelFile } from '../protocol';

const CACHE = 'loom-models';
/** The URL sets loaded before, each a model (weights, tokenizer, config), kept beside the cached files. */
const SETS_KEY = 'loom-chat-url-models';

/** Download progress: bytes received and expected (0 when the server does not say). */
export const progress = signal<{ readonly received: number; readonly total: number } | undefined>(undefined);
export const cachedSets = signal<readonly (readonly string[])[]>(readSets());

function readSets(): readonly (readonly string[])[] {
  try {
    const sets: unknown = JSON.parse(localStorage.getItem(SETS_KEY) ?? '[]');
    return Array.isArray(sets) ? sets.filter((set): set is string[] => Array.isArray(set)) : [];
  } catch {
    return [];
  }
}

function writeSets(sets: readonly (readonly string[])[]): void {
  localStorage.setItem(SETS_KEY, JSON.stringify(sets));
  cachedSets.value = sets;
}

export function fileName(url: string): string {
  return decodeURIComponent(new URL(url, location.href).pathname.split('/').pop() || url);
}

async function download(url: string, cache: Cache, done: number, total: number): Promise<ArrayBuffer> {
  const hit = await cache.match(url);
  if (hit) return hit.arrayBuffer();
  const response = await fetch(url).catch((error: unknown) => {
    throw new Error(
      `${url}: the download failed (${error instanceof Error ? error.message : String(error)})`,
    );
  });
  if (!response.ok || response.body === null) {
    throw new Error(
      `${url}: the server answered ${response.status} ${response.statusText}; check the address`,
    );
  }
  const chunks: Uint8Array[] = [];
  let received = 0;
  const reader = response.body.getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    chunks.push(next.value);
    received += next.value.length;
    progress.value = { received: done + received, total };
  }
  const bytes = new Uint8Array(received);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  await cache.put(url, new Response(bytes, { headers: { 'content-length': String(received) } }));
  return bytes.buffer;
}

async function sizes(urls: readonly string[], cache: Cache): Promise<number[]> {
  return Promise.all(
    urls.map(async (url) => {
      if (await cache.match(url)) return 0;
      const head = await fetch(url, { method: 'HEAD' }).catch(() => undefined);
      return Number(head?.headers.get('content-length') ?? 0);
    }),
  );
}

/** Downloads the files of a model (or takes them from the cache), showing progress, and remembers the set. */
export async function downloadModel(urls: readonly string[]): Promise<ModelFile[]> {
  const cache = await caches.open(CACHE);
  const expected = await sizes(urls, cache);
  const total = expected.reduce((sum, size) => sum + size, 0);
  const files: ModelFile[] = [];
  let done = 0;
  try {
    for (const [i, url] of urls.entries()) {
      const bytes = await download(url, cache, done, total);
      done += expected[i] || bytes.byteLength;
      files.push({ name: fileName(url), bytes });
    }
  } finally {
    progress.value = undefined;
  }
  const key = urls.join(' ');
  writeSets([urls, ...cachedSets.value.filter((set) => set.join(' ') !== key)]);
  return files;
}

/** Removes a model's files from the cache and from the list. */
export async function deleteCachedModel(urls: readonly string[]): Promise<void> {
  const cache = await caches.open(CACHE);
  await Promise.all(urls.map((url) => cache.delete(url)));
  const key = urls.join(' ');
  writeSets(cachedSets.value.filter((set) => set.join(' ') !== key));
}

/** The files a server offers under /model/ (`pnpm start`), listed in /model/manifest.json; none elsewhere. */
export async function servedModel(): Promise<ModelFile[]> {
  const response = await fetch('/model/manifest.json').catch(() => undefined);
  if (!response?.ok || !response.headers.get('content-type')?.includes('json')) return [];
  const { files } = (await response.json()) as { files: string[] };
  return Promise.all(
    files.map(async (name) => {
      const file = await fetch(`/model/${encodeURIComponent(name)}`);
      if (!file.ok) throw new Error(`/model/${name}: the server answered ${file.status}`);
      return { name, bytes: await file.arrayBuffer() };
    }),
  );
}
