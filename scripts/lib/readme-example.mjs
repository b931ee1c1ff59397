// @ts-check
// A README's example and the output it shows. The example is the first ```ts block under the
// "## Example" heading. Output is shown in `// ` comments on a console.log statement: a comment
// after the statement's closing `);` is one printed line; without one, the `// ` comment lines
// directly below the statement are the lines it prints, in order.

/** @typedef {{ line: number, lines: string[] }} ShownOutput  line: 1-based line of the statement in the block */

/**
 * The first ```ts block under "## Example" of a README, or why there is none.
 * @param {string} markdown
 * @returns {{ code: string, startLine: number } | { missing: string }}
 */
export function extractExample(markdown) {
  const lines = markdown.split('\n');
  const heading = lines.findIndex((l) => l.trim() === '## Example');
  if (heading < 0) return { missing: 'no "## Example" heading' };
  const end = lines.findIndex((l, i) => i > heading && /^#{1,2} /.test(l));
  const section = lines.slice(heading + 1, end < 0 ? lines.length : end);
  const open = section.findIndex((l) => l.trim() === '```ts');
  if (open < 0) return { missing: 'no ```ts block under "## Example"' };
  const close = section.findIndex((l, i) => i > open && l.trim() === '```');
  if (close < 0) return { missing: 'the ```ts block under "## Example" is not closed' };
  // startLine: the README line of the block's first code line (1-based).
  return { code: section.slice(open + 1, close).join('\n'), startLine: heading + open + 3 };
}

/**
 * The output comments of an example's console.log statements, in source order.
 * @param {string} code
 * @returns {ShownOutput[]}
 */
export function shownOutput(code) {
  const lines = code.split('\n');
  /** @type {ShownOutput[]} */
  const shown = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].trim().startsWith('console.log(')) continue;
    const start = i;
    while (i < lines.length && !/\);(\s*\/\/ .*)?$/.test(lines[i])) i++;
    if (i === lines.length)
      throw new Error(`line ${start + 1}: console.log( is not closed by a line ending in ");"`);
    const trailing = /\);\s*\/\/ (.*)$/.exec(lines[i]);
    if (trailing) {
      shown.push({ line: start + 1, lines: [trailing[1]] });
      continue;
    }
    const below = [];
    while (i + 1 < lines.length && lines[i + 1].trim().startsWith('// '))
      below.push(lines[++i].trim().slice(3));
    if (below.length > 0) shown.push({ line: start + 1, lines: below });
  }
  return shown;
}

/**
 * Checks that every shown output appears in the printed text, in order, each as whole
 * consecutive lines. Returns the first mismatch as a message, or null.
 * @param {ShownOutput[]} shown
 * @param {string} printed
 * @returns {string | null}
 */
export function compareOutput(shown, printed) {
  const out = printed.split('\n').map((l) => l.trimEnd());
  let from = 0;
  for (const { line, lines } of shown) {
    let at = -1;
    for (let i = from; i + lines.length <= out.length && at < 0; i++) {
      if (lines.every((l, j) => out[i + j] === l)) at = i;
    }
    if (at < 0) {
      const after = from === 0 ? '' : ` after printed line ${from}`;
      return `line ${line} shows ${JSON.stringify(lines.join('\n'))}, which was not printed${after}`;
    }
    from = at + lines.length;
  }
  return null;
}
