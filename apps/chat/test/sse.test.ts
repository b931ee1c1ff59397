import { describe, expect, it } from 'vitest';
import { serverSentEvents } from '../src/server/sse';

/** A body that arrives in these pieces (split anywhere, even inside a character or a CRLF). */
function body(...pieces: (string | Uint8Array<ArrayBuffer>)[]): ReadableStream<Uint8Array<ArrayBuffer>> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces)
        controller.enqueue(typeof piece === 'string' ? encoder.encode(piece) : piece);
      controller.close();
    },
  });
}

async function events(stream: ReadableStream<Uint8Array<ArrayBuffer>>): Promise<string[]> {
  const out: string[] = [];
  for await (const data of serverSentEvents(stream)) out.push(data);
  return out;
}

describe('serverSentEvents', () => {
  it('gives the data of each event, ended by a blank line', async () => {
    expect(await events(body('data: {"a":1}\n\ndata: [DONE]\n\n'))).toEqual(['{"a":1}', '[DONE]']);
  });

  it('joins events split across chunks, and across a CRLF', async () => {
    expect(await events(body('da', 'ta: one\r', '\n\r', '\ndata:two\n', '\n'))).toEqual(['one', 'two']);
    // A CR alone ends a line too; a CR at a chunk's end waits to see whether LF follows.
    expect(await events(body('data: a\r', 'data: b\r\r'))).toEqual(['a\nb']);
  });

  it('decodes UTF-8 split inside a character', async () => {
    const bytes = new TextEncoder().encode('data: héllo\n\n');
    expect(await events(body(bytes.slice(0, 8), bytes.slice(8)))).toEqual(['héllo']);
  });

  it('joins multi-line data, skips comments and other fields, drops an unfinished event', async () => {
    const text = ': keep-alive\nevent: message\nid: 7\ndata: first\ndata:  second\n\ndata: cut off';
    expect(await events(body(text))).toEqual(['first\n second']);
  });
});
