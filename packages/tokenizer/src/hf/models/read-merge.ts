import { jsonFail } from '../../formats/json-read';

/** One entry of a tokenizer.json BPE `merges` list: `"left right"` or `["left", "right"]`, both parts non-empty. */
export function readMerge(entry: unknown, source: string, path: string): readonly [string, string] {
  const parts =
    typeof entry === 'string'
      ? entry.split(' ')
      : Array.isArray(entry) && entry.every((part) => typeof part === 'string')
        ? entry
        : undefined;
  if (parts === undefined || parts.length !== 2 || parts[0] === '' || parts[1] === '') {
    jsonFail(source, path, '"left right" or ["left", "right"]', entry);
  }
  return [parts[0], parts[1]];
}
