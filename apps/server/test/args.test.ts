import { describe, expect, it } from 'vitest';
import { parseArgs, UsageError } from '../src/args';

describe('pnpm serve arguments', () => {
  it('listens on loopback port 8080 with CORS off by default, and reads LOOM_API_KEY', () => {
    expect(parseArgs(['--model', 'm.bin'], {})).toMatchObject({
      kind: 'serve',
      model: 'm.bin',
      host: '127.0.0.1',
      port: 8080,
      backend: 'cpu',
      apiKey: undefined,
      cors: undefined,
      parallel: 8,
      queue: 32,
      timeoutSeconds: 300,
    });
    expect(parseArgs(['--model', 'm.bin'], { LOOM_API_KEY: 'k' })).toMatchObject({ apiKey: 'k' });
    expect(parseArgs(['--model', 'm.bin', '--api-key', 'flag'], { LOOM_API_KEY: 'k' })).toMatchObject({
      apiKey: 'flag',
    });
  });

  it('reads every flag', () => {
    const argv = [
      '--model',
      'm',
      '--tokenizer',
      't',
      '--host',
      '0.0.0.0',
      '--port',
      '0',
      '--backend',
      'webgpu',
      '--weights',
      'f32',
    ];
    const more = [
      '--cors',
      'http://a',
      '--chat-template',
      'chatml',
      '--parallel',
      '4',
      '--queue',
      '0',
      '--timeout',
      '9',
    ];
    expect(parseArgs([...argv, ...more], {})).toEqual({
      kind: 'serve',
      model: 'm',
      tokenizer: 't',
      weights: 'f32',
      host: '0.0.0.0',
      port: 0,
      backend: 'webgpu',
      apiKey: undefined,
      cors: 'http://a',
      chatTemplate: 'chatml',
      parallel: 4,
      queue: 0,
      timeoutSeconds: 9,
    });
    expect(parseArgs(['--help'], {})).toEqual({ kind: 'help' });
  });

  it('refuses bad flags, naming them', () => {
    const bad = (argv: string[], message: RegExp) => {
      expect(() => parseArgs(argv, {})).toThrow(UsageError);
      expect(() => parseArgs(argv, {})).toThrow(message);
    };
    bad([], /--model PATH is required/);
    bad(['--model', 'm', '--port', '70000'], /--port must be an integer in \[0, 65535\], got "70000"/);
    bad(['--model', 'm', '--parallel', '0'], /--parallel must be an integer in \[1, 256\]/);
    bad(['--model', 'm', '--backend', 'cuda'], /--backend must be cpu or webgpu, got "cuda"/);
    bad(
      ['--model', 'm', '--chat-template', 'alpaca'],
      /--chat-template must be one of plain, llama2, chatml/,
    );
    bad(['--model', 'm', '--temperature', '1'], /Unknown option '--temperature'/);
    bad(['--model', 'm', 'extra'], /unexpected argument "extra"/);
    expect(() => parseArgs(['--model', 'm'], { LOOM_API_KEY: '' })).toThrow(/LOOM_API_KEY\) is empty/);
  });
});
