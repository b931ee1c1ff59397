import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join, normalize, sep } from 'node:path';
import { ISOLATION_HEADERS, sendStaticFile } from '@loom/server/static-files';

export interface ServeOptions {
  /** The built page (`vite build` output). */
  readonly root: string;
  /** A model's files to offer under /model/, listed in /model/manifest.json so that the page loads them. */
  readonly modelFiles?: readonly string[];
  readonly port?: number;
  readonly host?: string;
}

/** The model files of a directory (a Loom checkpoint without the trainer's own files), or the files given. */
export function modelFilesIn(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .filter((name) => /\.(safetensors|json|bin)$/.test(name) && !name.startsWith('trainer-state'))
    .map((name) => join(path, name));
}

/**
 * Serves the built chat page as `pnpm serve` does (`@loom/server`'s static files: no path out of `root`,
 * cross-origin isolated so the CPU backend may use threads), and the model files under /model/. Resolves once it
 * listens.
 */
export async function serveChat(options: ServeOptions): Promise<Server> {
  const root = normalize(options.root);
  const names = (options.modelFiles ?? []).map((file) => file.split(sep).pop()!);
  // Keyed as the page asks for them (encodeURIComponent), so no path is decoded here.
  const models = new Map(names.map((name, i) => [encodeURIComponent(name), options.modelFiles![i]]));
  const manifest = JSON.stringify({ files: names });
  const site = { root, missing: `${root}: the built page is missing` };
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (!path.startsWith('/model/')) {
      sendStaticFile(request, response, site).catch(() => response.destroy());
      return;
    }
    const headers = { ...ISOLATION_HEADERS, 'Cross-Origin-Resource-Policy': 'same-origin' };
    let body: string | Buffer | undefined;
    let type = 'application/octet-stream';
    if (path === '/model/manifest.json' && models.size > 0) {
      body = manifest;
      type = 'application/json';
    } else {
      const file = models.get(path.slice('/model/'.length));
      if (file) body = readFileSync(file);
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
