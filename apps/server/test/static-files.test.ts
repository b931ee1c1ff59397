import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServedModel } from '../src/load';
import type { LoomServer } from '../src/server';
import { loadStories, startServer } from './helpers';

/** A request with its path sent exactly as written (fetch would normalise `..` and `%2e%2e` first). */
function raw(
  base: string,
  path: string,
  method = 'GET',
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const { port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const dir = mkdtempSync(join(tmpdir(), 'loom-server-static-'));
const site = join(dir, 'dist');
const SECRET = 'the secret next to the served folder';
let served: ServedModel;
const servers: LoomServer[] = [];
let base: string;

async function start(options: Parameters<typeof startServer>[1]): Promise<string> {
  const started = await startServer(served, options);
  servers.push(started.server);
  return started.baseURL;
}

beforeAll(async () => {
  mkdirSync(join(site, 'assets'), { recursive: true });
  writeFileSync(join(site, 'index.html'), '<!doctype html><title>chat</title>');
  writeFileSync(join(site, 'assets/app.js'), 'console.log(1);');
  writeFileSync(join(site, 'assets/app.css'), 'body{}');
  writeFileSync(join(site, 'assets/kernels.wasm'), Buffer.from([0, 97, 115, 109, 1, 0, 0, 0]));
  writeFileSync(join(site, 'assets/blob.bin'), 'bytes');
  writeFileSync(join(dir, 'package.json'), `{"secret": "${SECRET}"}`);
  writeFileSync(join(dir, 'secret.txt'), SECRET);
  symlinkSync(join(dir, 'secret.txt'), join(site, 'leak.txt'));
  symlinkSync(dir, join(site, 'up'));
  symlinkSync(join(site, 'assets/app.js'), join(site, 'alias.js'));
  served = await loadStories();
  base = await start({ appDir: site });
});

afterAll(async () => {
  for (const server of servers) await server.close();
  served.model.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('the built chat app at /', () => {
  it('serves index.html at /, cross-origin isolated', async () => {
    const res = await raw(base, '/');
    expect(res.status).toBe(200);
    expect(res.body).toBe('<!doctype html><title>chat</title>');
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cross-origin-opener-policy']).toBe('same-origin');
    expect(res.headers['cross-origin-embedder-policy']).toBe('require-corp');
    expect(res.headers['cross-origin-resource-policy']).toBe('same-origin');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('serves assets with their content types, and HEAD without a body', async () => {
    const types: Record<string, string> = {
      '/assets/app.js': 'text/javascript; charset=utf-8',
      '/assets/app.css': 'text/css; charset=utf-8',
      '/assets/kernels.wasm': 'application/wasm',
      '/assets/blob.bin': 'application/octet-stream',
      '/alias.js': 'text/javascript; charset=utf-8', // a link that stays inside the folder
    };
    for (const [path, type] of Object.entries(types)) {
      const res = await raw(base, path);
      expect({ path, status: res.status, type: res.headers['content-type'] }).toEqual({
        path,
        status: 200,
        type,
      });
      expect(res.headers['cross-origin-embedder-policy']).toBe('require-corp');
    }
    expect((await raw(base, '/assets/app.js')).body).toBe('console.log(1);');
    const head = await raw(base, '/assets/app.js', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe('15');
    expect(head.body).toBe('');
  });

  it('never serves a file outside the folder: traversal as written, encoded, or through a link', async () => {
    const attempts: Record<string, number> = {
      '/../package.json': 404, // the URL parser takes the `..` away: /package.json is not in the folder
      '/%2e%2e/package.json': 404, // so it does with an encoded `..`
      '/..%2fpackage.json': 403, // an encoded slash is decoded after parsing: refused
      '/%2e%2e%2fpackage.json': 403,
      '/assets/..%2f..%2fsecret.txt': 403,
      '/leak.txt': 403, // a link to a file outside
      '/up/secret.txt': 403, // a link to a folder outside
      '/a%00b': 400,
      '/%E0%A4%A': 400,
    };
    for (const [path, status] of Object.entries(attempts)) {
      const res = await raw(base, path);
      expect({ path, status: res.status }).toEqual({ path, status });
      expect(res.body).not.toContain(SECRET);
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    }
  });

  it('answers 404 for missing files and folders, 405 for other methods', async () => {
    for (const path of ['/missing.js', '/assets', '/assets/']) {
      const res = await raw(base, path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(res.body).toContain(`${path}: not found`);
    }
    const post = await raw(base, '/', 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('keeps the API beside it: JSON routes, and an API key not needed for the page', async () => {
    const models = await raw(base, '/v1/models');
    expect(JSON.parse(models.body).data[0].id).toBe('stories260K.bin');
    const locked = await start({ appDir: site, apiKey: 'key' });
    expect((await raw(locked, '/')).status).toBe(200);
    expect((await raw(locked, '/v1/models')).status).toBe(401);
  });

  it('says how to build the app when its folder is missing', async () => {
    const missing = await start({ appDir: join(dir, 'not-built') });
    const res = await raw(missing, '/');
    expect(res.status).toBe(404);
    expect(res.body).toContain('the chat app is not built');
    expect(res.body).toContain('run pnpm --filter @loom/chat build');
  });
});
