import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('../lib/debian-mirror.sh', import.meta.url));
const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

function detect(name: string): { mirror: string; status: number | null } {
  const run = spawnSync('bash', [script, fixture(name)], { encoding: 'utf8' });
  return { mirror: run.stdout.trim(), status: run.status };
}

describe('Debian mirror detection (scripts/lib/debian-mirror.sh)', () => {
  it('reads one-line sources, skipping comments, deb-src and the security archive', () => {
    expect(detect('one-line')).toEqual({ mirror: 'http://mirror.example.org/debian', status: 0 });
  });

  it('reads deb822 URIs, never the URL in a comment above them', () => {
    expect(detect('deb822')).toEqual({ mirror: 'http://deb.example.net/debian', status: 0 });
  });

  it('takes the first Debian archive in apt order when both formats are present, ignoring other repositories', () => {
    expect(detect('both')).toEqual({ mirror: 'https://ftp.example.de/debian', status: 0 });
  });

  it('skips disabled and deb-src-only stanzas and reads URIs continued on the next line', () => {
    expect(detect('disabled')).toEqual({ mirror: 'http://continued.example/debian', status: 0 });
  });

  it('reads the URI after a bracketed options list', () => {
    expect(detect('options')).toEqual({ mirror: 'http://opts.example/debian', status: 0 });
  });

  it('prints nothing and exits 1 when no active Debian source exists', () => {
    expect(detect('none')).toEqual({ mirror: '', status: 1 });
  });
});
