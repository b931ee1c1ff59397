import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from './api-error';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Throws a 401 unless the request carries `Authorization: Bearer KEY` (compared in constant time). */
export function checkApiKey(req: IncomingMessage, apiKey: string | undefined): void {
  if (apiKey === undefined) return;
  const header = req.headers.authorization;
  const match = header === undefined ? null : /^Bearer (.+)$/.exec(header);
  if (match !== null && timingSafeEqual(digest(match[1]), digest(apiKey))) return;
  throw new ApiError(
    401,
    'authentication_error',
    'invalid_api_key',
    header === undefined
      ? 'no API key given; send the header "Authorization: Bearer KEY" with the key the server was started with'
      : 'the API key is wrong; send "Authorization: Bearer KEY" with the key the server was started with',
  );
}

/** Sets the CORS headers of a response when the server allows an origin (`--cors`); without it, none. */
export function setCorsHeaders(req: IncomingMessage, res: ServerResponse, origin: string | undefined): void {
  if (origin === undefined) return;
  res.setHeader('Access-Control-Allow-Origin', origin);
  res.setHeader('Vary', 'Origin');
  if (req.method !== 'OPTIONS') return;
  res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
  res.setHeader(
    'Access-Control-Allow-Headers',
    req.headers['access-control-request-headers'] ?? 'Authorization, Content-Type',
  );
  res.setHeader('Access-Control-Max-Age', '600');
}
