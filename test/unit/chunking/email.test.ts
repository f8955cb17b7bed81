import assert from 'node:assert/strict';
import { chunkDocument } from '../../../src/chunking/index.js';
import { countTokens } from '../../../src/text/tokens.js';
import { doc, sentences, table, text, title } from './build.js';

const ctx = { filename: 'mail.eml' };
const meta = { from: 'ada@example.com', to: 'alan@example.com', subject: 'Engines', date: 'Mon, 1 Jan 2024 10:00:00 +0000' };

describe('chunking email', () => {
  it('puts the header block before the body', () => {
    const chunks = chunkDocument(doc([text('Hi Alan,\nThe engine works.')], meta), 'email', {}, ctx);
    assert.deepEqual(chunks.map((c) => c.content), [
      'From: ada@example.com\nTo: alan@example.com\nSubject: Engines\nDate: Mon, 1 Jan 2024 10:00:00 +0000\nHi Alan,\nThe engine works.',
    ]);
  });

  it('chunks attachments on their own, tables included', () => {
    const chunks = chunkDocument(
      doc([text('See attached.'), title('Attachment: notes.txt'), text('Note body.'), title('Attachment: data.csv'), table([['k', 'v'], ['a', '1']])], {
        subject: 'Files',
      }),
      'email',
      {},
      ctx,
    );
    assert.deepEqual(chunks.map((c) => c.content), [
      'Subject: Files\nSee attached.',
      'Attachment: notes.txt\nNote body.',
      'Attachment: data.csv',
      'k | v\na | 1',
    ]);
  });

  it('merges a long body by tokens', () => {
    const chunks = chunkDocument(doc([text(sentences(40))], meta), 'email', { chunk_token_num: 64 }, ctx);
    assert.ok(chunks.length > 4);
    assert.ok(chunks[0]!.content.startsWith('From: ada@example.com'));
    for (const c of chunks) assert.ok(countTokens(c.content) <= 64);
  });

  it('produces nothing for an empty message without headers', () => {
    assert.deepEqual(chunkDocument(doc([]), 'email', {}, ctx), []);
  });
});
