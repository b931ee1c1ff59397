import { expect, it } from 'vitest';
import { collectGarbageUntil, describeEachBackend, settleGarbage } from './fixtures';

const greedy = { sampling: { temperature: 0 }, stop: { maxNewTokens: 20 } };

describeEachBackend(
  (name) => `generation resources on ${name}`,
  (suite) => {
    it('frees the cache when return() comes before the first event', async () => {
      const before = suite.device.liveCount();
      const events = suite.generator.generate('Once upon a time', greedy);
      expect(suite.device.liveCount()).toBe(before + 2 * suite.generator.model.config.numLayers);
      expect(await events.return()).toEqual({ done: true, value: undefined });
      expect(suite.device.liveCount()).toBe(before);
      expect(await events.next()).toEqual({ done: true, value: undefined });
    });

    it('frees the cache when return() comes after some events, and when throw() is called', async () => {
      const before = suite.device.liveCount();
      const events = suite.generator.generate('Once upon a time', greedy);
      expect((await events.next()).value?.type).toBe('token');
      await events.return();
      expect(suite.device.liveCount()).toBe(before);
      const thrown = suite.generator.generate('Once upon a time', greedy);
      await expect(thrown.throw(new Error('stop here'))).rejects.toThrow('stop here');
      expect(suite.device.liveCount()).toBe(before);
    });

    it('frees the cache of a stream dropped unread, or dropped half read, once it is collected', async () => {
      await settleGarbage(suite.device);
      const before = suite.device.liveCount();
      const start = () => {
        suite.generator.generate('Once upon a time', greedy);
      };
      start();
      // Finalisers run on a later turn of the event loop, so nothing can be freed before this line.
      expect(suite.device.liveCount()).toBe(before + 2 * suite.generator.model.config.numLayers);
      const halfRead = async () => {
        const events = suite.generator.generate('Lily and Tom', greedy);
        await events.next();
        await events.next();
      };
      await halfRead();
      await collectGarbageUntil(() => suite.device.liveCount() === before);
      expect(suite.device.liveCount()).toBe(before);
    });

    it('keeps a chat’s cache across a turn left early, and frees it on dispose or collection', async () => {
      await settleGarbage(suite.device);
      const before = suite.device.liveCount();
      const cacheTensors = 2 * suite.generator.model.config.numLayers;
      const chat = suite.generator.chat();
      const turn = chat.send('Tell me a story.', greedy);
      await turn.next();
      await turn.return();
      expect(suite.device.liveCount()).toBe(before + cacheTensors);
      expect(chat.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
      chat.dispose();
      expect(suite.device.liveCount()).toBe(before);
      const forgotten = () => {
        suite.generator.chat().send('Hi', greedy);
      };
      forgotten();
      expect(suite.device.liveCount()).toBe(before + cacheTensors);
      await collectGarbageUntil(() => suite.device.liveCount() === before);
      expect(suite.device.liveCount()).toBe(before);
    });
  },
);
