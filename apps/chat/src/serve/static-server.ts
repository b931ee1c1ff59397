import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { ISOLATION_HEADERS } from './isolation-headers';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.wasm': 'application/wasm',
};

export interface ServeOptions {
  /** The built page (`vite build` output). */
  readonly root: string;
  /** A model's files to offer under /model/, listed in /model/manifest.json so that the page loads them. */
  readonly modelFiles?: readonly string[];
  readonly port?: number;
  readonly host?: string;
}

/** The file under `root` that a URL path names, or undefined when it names none or climbs out of `root`. */
function fileUnder(root: string, path: string): string | undefined {
  const file = normalize(join(root, decodeURIComponent(path)));
  if (file !== root && !file.startsWith(root + sep)) return undefined;
  if (existsSync(file) && statSync(file).isDirectory()) return fileUnder(root, `${path}/index.html`);
  return existsSync(file) ? file : undefined;
}

/** The model files of a directory (a Loom checkpoint without the trainer's own files), or the files given. */
export function modelFilesIn(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .filter((name) => /\.(safetensors|json|bin)$/.test(name) && !name.startsWith('trainer-state'))
    .map((name) => join(path, name));
}

/**
 * Serves the built chat page, cross-origin isolated (COOP/COEP, so the CPU backend may use threads), and the
 * model files under /model/. Resolves once it listens.
 */
export async function serveChat(options: ServeOptions): Promise<Server> {
  const root = normalize(options.root);
  const models = new Map((options.modelFiles ?? []).map((file) => [file.split(sep).pop()!, file]));
  const manifest = JSON.stringify({ files: [...models.keys()] });
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    const headers = { ...ISOLATION_HEADERS, 'Cross-Origin-Resource-Policy': 'same-origin' };
    let body: string | Buffer | undefined;
    let type = 'application/octet-stream';
    if (path === '/model/manifest.json' && models.size > 0) {
      body = manifest;
      type = TYPES['.json'];
    } else if (path.startsWith('/model/')) {
      const file = models.get(decodeURIComponent(path.slice('/model/'.length)));
      if (file) body = readFileSync(file);
    } else {
      const file = fileUnder(root, path);
      if (file) {
        body = readFileSync(file);
        type = TYPES[extname(file)] ?? type;
      }
    }
    if (body === undefined) {
      response.writeHead(404, { ...headers, 'content-type': 'text/plain' });
      response.end(`${path}: not found`);
      return;
    }
    response.writeHead(200, { ...headers, 'content-type': type, 'content-length': Buffer.byteLength(body) });
    response.end(request.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve);
  });
  return server;
}
