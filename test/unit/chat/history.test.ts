import assert from 'node:assert/strict';
import { historyMessages, modelMessages } from '../../../src/chat/history.js';

describe('chat history for the model', () => {
  it('drops the opening prologue and empty messages', () => {
    assert.deepEqual(
      historyMessages([
        { role: 'assistant', content: 'Hi! How can I help?' },
        { role: 'user', content: 'q1' },
        { role: 'assistant', content: 'a1' },
        { role: 'user', content: 'q2' },
        { role: 'assistant', content: '' },
      ]),
      [
        { role: 'user', content: 'q1' },
        { role: 'assistant', content: 'a1' },
        { role: 'user', content: 'q2' },
      ],
    );
  });

  it('puts the system prompt first and the question last', () => {
    assert.deepEqual(modelMessages('S', [{ role: 'user', content: 'q1' }, { role: 'assistant', content: 'a1' }], 'q2', 8192), [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'q1' },
      { role: 'assistant', content: 'a1' },
      { role: 'user', content: 'q2' },
    ]);
    assert.deepEqual(modelMessages('', [], 'q', 8192), [{ role: 'user', content: 'q' }]);
  });

  it('drops the oldest history when it does not fit the context, never starting with an answer', () => {
    const long = 'word '.repeat(40);
    const history = [
      { role: 'user' as const, content: long },
      { role: 'assistant' as const, content: long },
      { role: 'user' as const, content: 'recent question' },
      { role: 'assistant' as const, content: 'recent answer' },
    ];
    const out = modelMessages('S', history, 'now', 60);
    assert.deepEqual(out.map((m) => m.content), ['S', 'recent question', 'recent answer', 'now']);
  });
});
