import type { Backend } from '@loom/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TextGenerator } from '../src/index';
import { backendNamed, backendNames, collectGarbageUntil, settleGarbage, stories } from './fixtures';

const backends = await Promise.all(
  backendNames.map(async (name) => [name, await backendNamed(name)] as const),
);

const greedy = { sampling: { temperature: 0 }, stop: { maxNewTokens: 20 } };

for (const [name, backend] of backends) {
  describe.skipIf(!backend)(`generation resources on ${name}`, () => {
    let generator: TextGenerator;
    let device: Backend;
    beforeAll(() => {
      device = backend as Backend;
      generator = stories(device);
    });
    afterAll(() => generator.model.dispose());

    it('frees the cache when return() comes before the first event', async () => {
      const before = device.liveCount();
      const events = generator.generate('Once upon a time', greedy);
      expect(device.liveCount()).toBe(before + 2 * generator.model.config.numLayers);
      expect(await events.return()).toEqual({ done: true, value: undefined });
      expect(device.liveCount()).toBe(before);
      expect(await events.next()).toEqual({ done: true, value: undefined });
    });

    it('frees the cache when return() comes after some events, and when throw() is called', async () => {
      const before = device.liveCount();
      const events = generator.generate('Once upon a time', greedy);
      expect((await events.next()).value?.type).toBe('token');
      await events.return();
      expect(device.liveCount()).toBe(before);
      const thrown = generator.generate('Once upon a time', greedy);
      await expect(thrown.throw(new Error('stop here'))).rejects.toThrow('stop here');
      expect(device.liveCount()).toBe(before);
    });

    it('frees the cache of a stream dropped unread, or dropped half read, once it is collected', async () => {
      await settleGarbage(device);
      const before = device.liveCount();
      const start = () => {
        generator.generate('Once upon a time', greedy);
      };
      start();
      // Finalisers run on a later turn of the event loop, so nothing can be freed before this line.
      expect(device.liveCount()).toBe(before + 2 * generator.model.config.numLayers);
      const halfRead = async () => {
        const events = generator.generate('Lily and Tom', greedy);
        await events.next();
        await events.next();
      };
      await halfRead();
      await collectGarbageUntil(() => device.liveCount() === before);
      expect(device.liveCount()).toBe(before);
    });

    it('keeps a chat’s cache across a turn left early, and frees it on dispose or collection', async () => {
      await settleGarbage(device);
      const before = device.liveCount();
      const cacheTensors = 2 * generator.model.config.numLayers;
      const chat = generator.chat();
      const turn = chat.send('Tell me a story.', greedy);
      await turn.next();
      await turn.return();
      expect(device.liveCount()).toBe(before + cacheTensors);
      expect(chat.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
      chat.dispose();
      expect(device.liveCount()).toBe(before);
      const forgotten = () => {
        generator.chat().send('Hi', greedy);
      };
      forgotten();
      expect(device.liveCount()).toBe(before + cacheTensors);
      await collectGarbageUntil(() => device.liveCount() === before);
      expect(device.liveCount()).toBe(before);
    });
  });
}
