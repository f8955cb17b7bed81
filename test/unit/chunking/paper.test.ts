import assert from 'node:assert/strict';
import { chunkDocument } from '../../../src/chunking/index.js';
import { countTokens } from '../../../src/text/tokens.js';
import { doc, pos, sentences, text, title } from './build.js';

const ctx = { filename: 'paper.pdf' };

describe('chunking paper', () => {
  it('keeps title, authors and abstract together, then splits by sections', () => {
    const chunks = chunkDocument(
      doc([
        title('Retrieval at Scale', 1, { positions: [pos(1, 0)] }),
        text('A. Author, B. Author', { positions: [pos(1, 20)] }),
        title('Abstract', 2),
        text('We study retrieval.'),
        title('1 Introduction', 1),
        text('Retrieval matters.'),
        title('2 Method', 1),
        title('2.1 Data', 2),
        text('We use SciFact.'),
      ]),
      'paper',
      {},
      ctx,
    );
    assert.deepEqual(chunks.map((c) => c.content), [
      'Retrieval at Scale\nA. Author, B. Author\nAbstract\nWe study retrieval.',
      '1 Introduction\nRetrieval matters.',
      '2 Method\n2.1 Data\nWe use SciFact.',
    ]);
    assert.deepEqual(chunks[0]!.positions, [pos(1, 0), pos(1, 20)]);
  });

  it('recognises an inline abstract and takes the title from meta when the text has none', () => {
    const chunks = chunkDocument(
      doc([text('Abstract—We propose X.'), text('More abstract.'), title('Introduction'), text('Body.')], { title: 'X Is Enough' }),
      'paper',
      {},
      ctx,
    );
    assert.deepEqual(chunks.map((c) => c.content), ['X Is Enough\nAbstract—We propose X.\nMore abstract.', 'Introduction\nBody.']);
  });

  it('puts the title on every piece of a long abstract', () => {
    const chunks = chunkDocument(doc([title('Long Paper'), title('Abstract'), text(sentences(20))]), 'paper', { chunk_token_num: 60 }, ctx);
    assert.ok(chunks.length > 2);
    for (const c of chunks) {
      assert.ok(c.content.startsWith('Long Paper\n'));
      assert.ok(countTokens(c.content) <= 60);
    }
  });

  it('emits a lone title', () => {
    assert.deepEqual(chunkDocument(doc([title('Only a title')]), 'paper', {}, ctx), [{ content: 'Only a title' }]);
  });
});
