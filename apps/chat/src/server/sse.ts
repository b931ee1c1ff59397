/**
 * The `data` of each server-sent event in a response body (the text/event-stream format: lines ending in LF, CR
 * or CRLF; an event ends at a blank line; `data:` lines are joined with LF; comments and other fields skipped).
 */
export async function* serverSentEvents(body: ReadableStream<BufferSource>): AsyncGenerator<string, void> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let pending = '';
  let data: string[] = [];
  function* lines(text: string): Generator<string> {
    for (const line of text.split(/\r\n|\r|\n/)) {
      if (line === '') {
        if (data.length > 0) yield data.join('\n');
        data = [];
      } else if (line === 'data' || line.startsWith('data:')) {
        data.push(line.slice(5).replace(/^ /, ''));
      }
    }
  }
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      pending += next.value;
      // The text up to the last line break, but a CR at the very end may be the first half of a CRLF.
      const end = Math.max(pending.lastIndexOf('\n'), pending.lastIndexOf('\r', pending.length - 2));
      if (end < 0) continue;
      yield* lines(pending.slice(0, end));
      pending = pending.slice(end + 1);
    }
    // A CR held back ends its line; an event not ended by a blank line is dropped, as the format says.
    if (pending.endsWith('\r')) yield* lines(pending.slice(0, -1));
  } finally {
    await reader.cancel().catch(() => {});
  }
}
