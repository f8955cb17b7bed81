import assert from 'node:assert/strict';
import { chunkDocument } from '../../../src/chunking/index.js';
import { doc, pos, table, text } from './build.js';

const ctx = { filename: 'people.xlsx' };

describe('chunking table', () => {
  it('makes one "header: value; header: value" chunk per data row', () => {
    const chunks = chunkDocument(
      doc([
        table(
          [
            ['Name', 'Age', '', 'City'],
            ['Ada', '36', 'x', 'London'],
            ['Alan', '', '', 'Wilmslow'],
            ['', '', '', ''],
          ],
          { name: 'People', positions: [pos(1, 0)] },
        ),
        table([['Id', 'Score'], ['7', '9.5']], { name: 'Scores', page: 2 }),
      ]),
      'table',
      {},
      ctx,
    );
    assert.deepEqual(chunks, [
      { content: 'Name: Ada; Age: 36; column_3: x; City: London', positions: [pos(1, 0)] },
      { content: 'Name: Alan; City: Wilmslow', positions: [pos(1, 0)] },
      { content: 'Id: 7; Score: 9.5' },
    ]);
  });

  it('reads tab-separated text when there are no tables', () => {
    const chunks = chunkDocument(doc([text('Name\tAge\nAda\t36\nbroken line\nAlan\t41')]), 'table', {}, ctx);
    assert.deepEqual(chunks.map((c) => c.content), ['Name: Ada; Age: 36', 'Name: Alan; Age: 41']);
  });

  it('uses the rendered text when rows are missing', () => {
    const chunks = chunkDocument(doc([{ kind: 'table', text: 'A | B\n1 | 2' }]), 'table', {}, ctx);
    assert.deepEqual(chunks.map((c) => c.content), ['A: 1; B: 2']);
  });

  it('produces nothing for a header-only table', () => {
    assert.deepEqual(chunkDocument(doc([table([['A', 'B']])]), 'table', {}, ctx), []);
  });
});
