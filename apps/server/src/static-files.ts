import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, isAbsolute, relative, resolve, sep } from 'node:path';

/** Cross-origin isolation, so a page may share WebAssembly memory with worker threads. */
export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
} as const;

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};

/** A folder of static files served at `/`. */
export interface StaticSite {
  readonly root: string;
  /** Said with the 404 when `root` itself does not exist, e.g. how to build it. */
  readonly missing: string;
}

/** What a URL path names in a site: a file to send, or the status and reason it gets instead. */
export type StaticLookup =
  | { readonly kind: 'file'; readonly file: string; readonly size: number }
  | { readonly kind: 'refused'; readonly status: 400 | 403 | 404; readonly message: string };

const inside = (root: string, path: string) => {
  const rel = relative(root, path);
  return rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
};

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code;

/**
 * Finds the file a (normalised) URL path names under `site.root`: `/` and paths ending in `/` name their
 * `index.html`. A path that leaves the root, as written or through a symbolic link, is refused (403).
 */
export async function findStaticFile(site: StaticSite, urlPath: string): Promise<StaticLookup> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return { kind: 'refused', status: 400, message: `${urlPath}: not a valid percent-encoded path` };
  }
  if (decoded.includes('\0')) return { kind: 'refused', status: 400, message: 'the path holds a NUL byte' };
  const wanted = resolve(site.root, `.${decoded.endsWith('/') ? `${decoded}index.html` : decoded}`);
  if (!inside(resolve(site.root), wanted)) {
    return { kind: 'refused', status: 403, message: `${urlPath}: outside the served folder` };
  }
  let root: string;
  try {
    root = await realpath(site.root);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
    return { kind: 'refused', status: 404, message: site.missing };
  }
  const notFound = { kind: 'refused', status: 404, message: `${urlPath}: not found` } as const;
  let file: string;
  try {
    file = await realpath(wanted);
  } catch (error) {
    if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return notFound;
    throw error;
  }
  if (!inside(root, file)) {
    return { kind: 'refused', status: 403, message: `${urlPath}: links outside the served folder` };
  }
  const info = await stat(file);
  return info.isFile() ? { kind: 'file', file, size: info.size } : notFound;
}

/**
 * Answers a GET or HEAD of a static file of `site`, cross-origin isolated (COOP/COEP), streamed from disk; a
 * refusal is a plain-text status naming the reason.
 */
export async function sendStaticFile(
  req: IncomingMessage,
  res: ServerResponse,
  site: StaticSite,
): Promise<void> {
  const headers = {
    ...ISOLATION_HEADERS,
    'Cross-Origin-Resource-Policy': 'same-origin',
    'X-Content-Type-Options': 'nosniff',
  };
  const refuse = (status: number, message: string, extra: Readonly<Record<string, string>> = {}) => {
    res.writeHead(status, { ...headers, ...extra, 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(`${message}\n`);
  };
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    refuse(405, `${req.method} ${path}: static files take GET or HEAD`, { Allow: 'GET, HEAD' });
    return;
  }
  const lookup = await findStaticFile(site, path);
  if (lookup.kind === 'refused') {
    refuse(lookup.status, lookup.message);
    return;
  }
  res.writeHead(200, {
    ...headers,
    'Content-Type': TYPES[extname(lookup.file)] ?? 'application/octet-stream',
    'Content-Length': lookup.size,
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  createReadStream(lookup.file)
    .on('error', () => res.destroy())
    .pipe(res);
}
