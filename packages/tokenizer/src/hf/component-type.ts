import { type JsonObject, jsonFail } from '../formats/json-read';

/**
 * The `type` of a tokenizer.json component (`normalizer`, `pre_tokenizer`...), refused by name when Loom does not
 * implement it.
 */
export function readType<const T extends string>(
  object: JsonObject,
  types: readonly T[],
  source: string,
  path: string,
): T {
  const found = types.find((type) => type === object.type);
  if (found !== undefined) return found;
  const key = `${path}.type`;
  if (typeof object.type !== 'string') jsonFail(source, key, 'a string', object.type);
  throw new Error(
    `${source}: key "${key}": ${JSON.stringify(object.type)} is not supported by Loom; expected one of ` +
      `${types.map((t) => JSON.stringify(t)).join(', ')} (use a tokenizer.json without it)`,
  );
}
