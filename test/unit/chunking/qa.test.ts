import assert from 'node:assert/strict';
import { chunkDocument } from '../../../src/chunking/index.js';
import { doc, pos, table, text, title } from './build.js';

const ctx = { filename: 'faq.xlsx' };
const qa = (sections: Parameters<typeof doc>[0]) => chunkDocument(doc(sections), 'qa', { raptor: { use_raptor: false } }, ctx);

describe('chunking qa', () => {
  it('reads rows: first column question, second answer; skips a header row', () => {
    const chunks = qa([
      table(
        [
          ['Question', 'Answer'],
          ['What is Cairn?', 'A retrieval service.'],
          ['', ''],
          ['Only a question', ''],
          ['How fast?', 'Fast.'],
        ],
        { positions: [pos(1, 0)] },
      ),
    ]);
    assert.deepEqual(chunks, [
      { content: 'Question: What is Cairn?\tAnswer: A retrieval service.', questions: ['What is Cairn?'], positions: [pos(1, 0)] },
      { content: 'Question: How fast?\tAnswer: Fast.', questions: ['How fast?'], positions: [pos(1, 0)] },
    ]);
  });

  it('keeps a first row that is data', () => {
    const chunks = qa([table([['Who?', 'Me.'], ['When?', 'Now.']])]);
    assert.equal(chunks.length, 2);
  });

  it('reads Q:/A: text, with multi-line answers and prefixes removed', () => {
    const chunks = qa([
      text('Q: What does it cost?\nA: Nothing.\nReally nothing.', { positions: [pos(1, 1)] }),
      text('Question: Is there a limit?', { positions: [pos(1, 2)] }),
      text('Answer: Yes, 128 characters.', { positions: [pos(2, 1)] }),
      text('Q: Unanswered?'),
    ]);
    assert.deepEqual(chunks, [
      {
        content: 'Question: What does it cost?\tAnswer: Nothing.\nReally nothing.',
        questions: ['What does it cost?'],
        positions: [pos(1, 1)],
      },
      {
        content: 'Question: Is there a limit?\tAnswer: Yes, 128 characters.',
        questions: ['Is there a limit?'],
        positions: [pos(1, 2), pos(2, 1)],
      },
    ]);
  });

  it('reads tab-separated lines', () => {
    const chunks = qa([text('question\tanswer\nWhere?\tHere.\nWhy?\tBecause.')]);
    assert.deepEqual(chunks.map((c) => c.content), ['Question: Where?\tAnswer: Here.', 'Question: Why?\tAnswer: Because.']);
  });

  it('reads titles as questions and the text under them as answers', () => {
    const chunks = qa([title('How do I install?', 2), text('Run the installer.'), text('Then restart.'), title('Empty?'), title('Last?'), text('Yes.')]);
    assert.deepEqual(chunks.map((c) => c.questions), [['How do I install?'], ['Last?']]);
    assert.equal(chunks[0]!.content, 'Question: How do I install?\tAnswer: Run the installer.\nThen restart.');
  });

  it('keeps document order across tables and text', () => {
    const chunks = qa([text('Q: First?\nA: One.'), table([['Second?', 'Two.']]), text('Q: Third?\nA: Three.')]);
    assert.deepEqual(chunks.map((c) => c.questions![0]), ['First?', 'Second?', 'Third?']);
  });

  it('produces nothing without pairs', () => {
    assert.deepEqual(qa([]), []);
    assert.deepEqual(qa([text('just prose')]), []);
  });
});
