import assert from 'node:assert/strict';
import { ThinkSplitter, stripThink } from '../../../src/models/think.js';
import type { ChatDelta } from '../../../src/models/types.js';

function run(chunks: string[]): ChatDelta[] {
  const s = new ThinkSplitter();
  const out = [...chunks.flatMap((c) => s.push(c)), ...s.end()];
  // merge adjacent deltas of the same kind for easy comparison
  return out.reduce<ChatDelta[]>((acc, d) => {
    const last = acc[acc.length - 1];
    if (last && last.kind === d.kind) last.text += d.text;
    else acc.push({ ...d });
    return acc;
  }, []);
}

describe('models/think', () => {
  it('separates a think block from the answer', () => {
    assert.deepEqual(run(['<think>plan it</think>\n\nThe answer.']), [
      { kind: 'reasoning', text: 'plan it' },
      { kind: 'answer', text: 'The answer.' },
    ]);
  });

  it('handles tags split across chunks, one character at a time', () => {
    const text = 'pre <think>a b c</think> post';
    assert.deepEqual(run([...text]), [
      { kind: 'answer', text: 'pre ' },
      { kind: 'reasoning', text: 'a b c' },
      { kind: 'answer', text: 'post' },
    ]);
  });

  it('passes through text that only looks like a tag prefix', () => {
    assert.deepEqual(run(['a <thi', 'ng> and <', '/b>']), [{ kind: 'answer', text: 'a <thing> and </b>' }]);
    assert.deepEqual(run(['ends with <th']), [{ kind: 'answer', text: 'ends with <th' }]);
  });

  it('stripThink keeps only the answer', () => {
    assert.equal(stripThink('<think>x</think>\nHello'), 'Hello');
    assert.equal(stripThink('no tags'), 'no tags');
  });
});
