import assert from 'node:assert/strict';
import { doneMessage } from '../../../activities/parse/index-chunks.js';

describe("a finished parse's progress_msg", () => {
  it('begins with RAGFlow\'s "Task done", then Cairn\'s figures', () => {
    assert.equal(doneMessage(12, 3400, 2.345), 'Task done: 12 chunks, 3400 tokens in 2.3 s');
  });

  it('counts one chunk and one token in the singular', () => {
    assert.equal(doneMessage(1, 1, 0.04), 'Task done: 1 chunk, 1 token in 0.0 s');
  });
});
