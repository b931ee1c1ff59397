import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from './api-error';

/**
 * The request body as text; a 413 ApiError as soon as it passes `limit` bytes. The rest is read and dropped, not
 * buffered, so the response can still reach the client.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const tooLarge = new ApiError(
    413,
    'invalid_request_error',
    'request_too_large',
    `the request body is larger than the server's limit of ${limit} bytes; send a smaller request`,
  );
  return new Promise((resolve, reject) => {
    if (Number(req.headers['content-length'] ?? 0) > limit) {
      req.resume();
      reject(tooLarge);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      req.resume();
      reject(tooLarge);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * Sends an error object, or, when a stream already started, writes it as a last event. A request whose body was
 * not read to the end (413) closes its connection, so a client sending more cannot tie the server up.
 */
export function sendError(res: ServerResponse, error: ApiError, bodyUnread = false): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end(`data: ${JSON.stringify(error.body())}\n\ndata: [DONE]\n\n`);
    return;
  }
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  if (bodyUnread) res.setHeader('Connection', 'close');
  sendJson(res, error.status, error.body());
}

/** Starts a server-sent event stream. */
export function startEvents(res: ServerResponse): void {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
  });
  res.flushHeaders();
}

export function sendEvent(res: ServerResponse, value: unknown): void {
  if (!res.writableEnded && !res.destroyed) res.write(`data: ${JSON.stringify(value)}\n\n`);
}

export function endEvents(res: ServerResponse): void {
  if (!res.writableEnded) res.end('data: [DONE]\n\n');
}
