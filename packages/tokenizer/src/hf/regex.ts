import { jsonFail, readObject, readString } from '../formats/json-read';

/** A tokenizer.json pattern: a literal string or an Oniguruma regex (the Rust `tokenizers` crate's engine). */
export type PatternJson = { readonly String: string } | { readonly Regex: string };

/** Oniguruma's Unicode `\s` and `\w` as JavaScript class contents (JS `\s` adds U+FEFF and lacks U+0085). */
const SPACE = '\\p{White_Space}';
const WORD = '\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}';

/** Rewrites of `\X` outside a character class and inside one. */
const OUTSIDE: Readonly<Record<string, string>> = {
  s: SPACE,
  S: '\\P{White_Space}',
  d: '\\p{Nd}',
  D: '\\P{Nd}',
  w: `[${WORD}]`,
  W: `[^${WORD}]`,
  A: '^',
  z: '$',
  Z: '(?=\\n?$)',
};
const INSIDE: Readonly<Record<string, string>> = {
  s: SPACE,
  S: '\\P{White_Space}',
  d: '\\p{Nd}',
  D: '\\P{Nd}',
  w: WORD,
};
/** Characters JavaScript's `u` mode lets a backslash escape; other escaped punctuation is written plainly. */
const JS_ESCAPABLE = new Set([...'^$\\.*+?()[]{}|/']);

function otherCase(char: string): string | undefined {
  if (!/^[A-Za-z]$/.test(char)) return undefined;
  return char === char.toLowerCase() ? char.toUpperCase() : char.toLowerCase();
}

/**
 * Translates an Oniguruma pattern as tokenizer.json files write it into a JavaScript `u`-mode pattern: `\s`, `\d`,
 * `\w` keep their Unicode meaning, `\A`/`\z`/`\Z` become anchors, `\x{...}` becomes `\u{...}`, and a
 * case-insensitive group `(?i:...)` (which Node 20's RegExp lacks) spells out both cases of each ASCII letter.
 * Atomic groups, possessive quantifiers and nested classes are refused: JavaScript has no equivalent.
 */
export function onigurumaToJs(pattern: string, where: string): string {
  const refuse = (what: string, at: number): never => {
    throw new Error(
      `${where}: the regex ${JSON.stringify(pattern)} uses ${what} at index ${at}, which JavaScript's RegExp ` +
        'cannot express; use a tokenizer.json without it',
    );
  };
  let out = '';
  /** For each open group: whether it is case-insensitive. */
  const groups: boolean[] = [];
  let inClass = false;
  /** Whether the last thing written outside a class was a quantifier (a `+` after one makes it possessive). */
  let quantified = false;
  let i = 0;
  const ignoreCase = (): boolean => groups.includes(true);
  while (i < pattern.length) {
    const char = pattern[i];
    if (char === '\\') {
      const next = pattern[i + 1];
      if (next === undefined) refuse('a trailing backslash', i);
      const braced = /^\\([pPx])\{[^}]*\}/.exec(pattern.slice(i));
      if (braced !== null) {
        out += braced[1] === 'x' ? `\\u${braced[0].slice(2)}` : braced[0];
        quantified = false;
        i += braced[0].length;
        continue;
      }
      const rewrite = inClass ? INSIDE[next] : OUTSIDE[next];
      if (rewrite !== undefined) out += rewrite;
      else if (inClass && next === 'W') refuse('\\W inside a character class', i);
      else if (/[A-Za-z0-9]/.test(next) || JS_ESCAPABLE.has(next) || (inClass && next === '-')) {
        out += `\\${next}`;
      } else out += next;
      quantified = false;
      i += 2;
      continue;
    }
    if (inClass) {
      if (char === '[') refuse('a nested character class', i);
      if (char === ']') {
        inClass = false;
        quantified = false;
      }
      out += char;
      const other = ignoreCase() ? otherCase(char) : undefined;
      if (other !== undefined && pattern[i + 1] === '-' && otherCase(pattern[i + 2] ?? '') !== undefined) {
        const end = pattern[i + 2];
        out += `-${end}${other}-${otherCase(end)}`;
        i += 3;
        continue;
      }
      if (other !== undefined) out += other;
      i++;
      continue;
    }
    if (char === '[') {
      inClass = true;
      out += char;
      if (pattern[i + 1] === '^') {
        out += '^';
        i++;
      }
      if (pattern[i + 1] === ']') {
        out += '\\]';
        i++;
      }
      quantified = false;
      i++;
      continue;
    }
    const braces = /^\{(\d+(,\d*)?|,\d+)\}/.exec(pattern.slice(i));
    if (braces !== null || char === '*' || char === '+' || char === '?') {
      if (quantified && char === '+') refuse('a possessive quantifier', i);
      const lazy: boolean = quantified && char === '?';
      const text = braces === null ? char : braces[0];
      out += text;
      quantified = !lazy && !(char === '?' && pattern[i - 1] === '(');
      i += text.length;
      continue;
    }
    quantified = false;
    if (char === '(') {
      const flags = /^\(\?([imx-]+):/.exec(pattern.slice(i));
      if (flags !== null) {
        if (flags[1] !== 'i') refuse(`the inline flags (?${flags[1]}:`, i);
        groups.push(true);
        out += '(?:';
        i += flags[0].length;
        continue;
      }
      if (pattern.startsWith('(?>', i)) refuse('an atomic group (?>', i);
      groups.push(false);
      out += char;
      i++;
      continue;
    }
    if (char === ')') groups.pop();
    if (char === '{' || char === '}') {
      out += `\\${char}`;
      i++;
      continue;
    }
    const other = ignoreCase() ? otherCase(char) : undefined;
    out += other === undefined ? char : `[${char}${other}]`;
    i++;
  }
  return out;
}

/** Escapes `text` for use inside a RegExp. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** Reads a `{ "String": ... } | { "Regex": ... }` pattern as a global Unicode RegExp. */
export function readPattern(value: unknown, source: string, path: string): RegExp {
  const object = readObject(value, source, path);
  if (typeof object.String === 'string') return new RegExp(escapeRegExp(object.String), 'gu');
  if (object.Regex === undefined) jsonFail(source, path, '{"String": ...} or {"Regex": ...}', value);
  const where = `${source}: key "${path}.Regex"`;
  const translated = onigurumaToJs(readString(object.Regex, source, `${path}.Regex`), where);
  try {
    return new RegExp(translated, 'gu');
  } catch (error) {
    throw new Error(
      `${where}: the regex does not compile in JavaScript (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}
