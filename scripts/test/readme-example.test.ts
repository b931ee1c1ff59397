import { describe, expect, it } from 'vitest';
import { compareOutput, extractExample, shownOutput } from '../lib/readme-example.mjs';

const fence = '```';

describe('extractExample (scripts/lib/readme-example.mjs)', () => {
  it('takes the first ts block under "## Example", skipping other languages, and says where it starts', () => {
    const readme = [
      '# pkg',
      `${fence}ts`,
      'before();',
      fence,
      '## Example',
      `${fence}sh`,
      'pnpm x',
      fence,
      `${fence}ts`,
      'first();',
      fence,
      `${fence}ts`,
      'second();',
      fence,
    ].join('\n');
    expect(extractExample(readme)).toEqual({ code: 'first();', startLine: 10 });
  });

  it('stops at the next section and says what is missing', () => {
    expect(extractExample('# pkg\ntext')).toEqual({ missing: 'no "## Example" heading' });
    const later = `## Example\ntext\n## API\n${fence}ts\nx();\n${fence}`;
    expect(extractExample(later)).toEqual({ missing: 'no ```ts block under "## Example"' });
    expect(extractExample(`## Example\n${fence}ts\nx();`)).toEqual({
      missing: 'the ```ts block under "## Example" is not closed',
    });
  });
});

describe('shownOutput', () => {
  it('reads a comment after the closing ");" and the comment lines below a statement without one', () => {
    const code = [
      "console.log('a'); // a",
      'const x = 1; // not output',
      'console.log(',
      '  x,',
      '); // 1',
      '// a remark, not after a console.log',
      'for (const i of [1, 2]) {',
      '  console.log(i);',
      '  // 1',
      '  // 2',
      '}',
      "console.log('unchecked');",
      '',
      '// not below it',
    ].join('\n');
    expect(shownOutput(code)).toEqual([
      { line: 1, lines: ['a'] },
      { line: 3, lines: ['1'] },
      { line: 8, lines: ['1', '2'] },
    ]);
  });

  it('refuses a console.log that never closes', () => {
    expect(() => shownOutput('console.log(\n  1,\n')).toThrow('line 1: console.log( is not closed');
  });
});

describe('compareOutput', () => {
  const shown = [
    { line: 3, lines: ['a'] },
    { line: 7, lines: ['b', 'c'] },
  ];

  it('accepts shown lines printed in order, with other lines around and trailing spaces ignored', () => {
    expect(compareOutput(shown, 'x\na  \ny\nb\nc\nz\n')).toBe(null);
  });

  it('names the README line of the first output that was not printed, or printed out of order', () => {
    expect(compareOutput(shown, 'a\nb\nx\nc\n')).toBe(
      'line 7 shows "b\\nc", which was not printed after printed line 1',
    );
    expect(compareOutput(shown, 'b\nc\na\n')).toBe(
      'line 7 shows "b\\nc", which was not printed after printed line 3',
    );
    expect(compareOutput(shown, 'A\n')).toBe('line 3 shows "a", which was not printed');
  });
});
