import type { Random } from './random';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Replacement values: wrong types, limits, huge and tiny numbers, long strings and arrays. */
function replacement(random: Random): Json {
  const values: Json[] = [
    0,
    -1,
    1,
    0.5,
    2 ** 31,
    1e8,
    2e9,
    2 ** 53,
    1e308,
    -1e308,
    null,
    true,
    '',
    'x',
    'NaN',
    'F32',
    'BF16',
    'I64',
    '<s>',
    'é'.repeat(200),
    [],
    [0],
    [-1, 2 ** 40],
    {},
    { a: 1 },
  ];
  return random.pick(values);
}

type Container = Json[] | { [key: string]: Json };

function containers(value: Json, found: Container[] = []): Container[] {
  if (value !== null && typeof value === 'object') {
    found.push(value);
    for (const child of Object.values(value)) containers(child, found);
  }
  return found;
}

/** Changes one place in a parsed JSON document: replaces, removes, adds or copies a value. Mutates `root`. */
function mutateOnce(root: Json, random: Random): Json {
  const all = containers(root);
  if (all.length === 0) return replacement(random);
  const target = random.pick(all);
  const keys = Object.keys(target);
  const operation = random.int(4);
  if (Array.isArray(target)) {
    const at = random.int(target.length + 1);
    if (operation === 0 && target.length > 0) target.splice(at, 1);
    else if (operation === 1 && target.length > 0) target.push(target[random.int(target.length)]);
    else target[Math.min(at, target.length)] = replacement(random);
    return root;
  }
  if (operation === 0 && keys.length > 0) delete target[random.pick(keys)];
  else if (operation === 1)
    target[keys.length > 0 && random.chance(0.5) ? random.pick(keys) : 'extra'] = replacement(random);
  else if (operation === 2 && keys.length > 1) target[random.pick(keys)] = target[random.pick(keys)];
  else if (keys.length > 0) target[random.pick(keys)] = replacement(random);
  return root;
}

/** One to three structural mutations of JSON text; text that does not parse is returned unchanged. */
export function mutateJsonText(text: string, random: Random): string {
  let root: Json;
  try {
    root = JSON.parse(text) as Json;
  } catch {
    return text;
  }
  const count = 1 + random.int(3);
  for (let i = 0; i < count; i++) root = mutateOnce(root, random);
  return JSON.stringify(root);
}
