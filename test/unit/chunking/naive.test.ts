import assert from 'node:assert/strict';
import { chunkDocument } from '../../../src/chunking/index.js';
import { countTokens } from '../../../src/text/tokens.js';
import { doc, image, pos, sentences, table, text, title } from './build.js';

const ctx = { filename: 'doc.pdf' };

describe('chunking naive', () => {
  it('merges sections up to chunk_token_num and respects it', () => {
    const sections = Array.from({ length: 30 }, (_, i) => text(sentences(3, `p${i}-`)));
    for (const limit of [16, 64, 128, 512]) {
      const chunks = chunkDocument(doc(sections), 'naive', { chunk_token_num: limit, delimiter: '\n' }, ctx);
      assert.ok(chunks.length > 0);
      for (const c of chunks) assert.ok(countTokens(c.content) <= limit, `${countTokens(c.content)} > ${limit}`);
      const all = chunks.map((c) => c.content).join(' ');
      for (let i = 0; i < 30; i++) assert.ok(all.includes(`Sentence p${i}-2`), `section ${i} kept`);
    }
  });

  it('chunks a section of 300,000 lines (a 20 MB text file) without overflowing the stack', () => {
    const lines = Array.from({ length: 300_000 }, (_, i) => `Line ${i}.`);
    const chunks = chunkDocument(doc([text(lines.join('\n'))]), 'naive', { chunk_token_num: 512 }, ctx);
    assert.ok(chunks.length > 1000);
    assert.equal(chunks.map((c) => c.content).join('\n'), lines.join('\n'));
  });

  it('fills chunks: small sections share a chunk', () => {
    const chunks = chunkDocument(doc([text('Alpha.'), text('Beta.'), text('Gamma.')]), 'naive', { chunk_token_num: 128 }, ctx);
    assert.deepEqual(chunks.map((c) => c.content), ['Alpha.\nBeta.\nGamma.']);
  });

  it('splits on single-character delimiters, keeping them', () => {
    const chunks = chunkDocument(
      doc([text('First part! Second part? Third part')]),
      'naive',
      { chunk_token_num: 4, delimiter: '!?' },
      ctx,
    );
    assert.deepEqual(chunks.map((c) => c.content), ['First part!', 'Second part?', 'Third part']);
  });

  it('treats backtick delimiters as hard boundaries and drops them', () => {
    const body = 'Intro text\n## Setup\nInstall it.\n## Usage\nRun it.';
    const chunks = chunkDocument(doc([text(body)]), 'naive', { chunk_token_num: 512, delimiter: '\n`##`' }, ctx);
    assert.deepEqual(chunks.map((c) => c.content), ['Intro text', 'Setup\nInstall it.', 'Usage\nRun it.']);
  });

  it('accepts the RAGFlow multi-language delimiter string', () => {
    const chunks = chunkDocument(
      doc([text('第一句。第二句！Third sentence; fourth')]),
      'naive',
      { chunk_token_num: 6, delimiter: '\n!?;。；！？' },
      ctx,
    );
    assert.deepEqual(chunks.map((c) => c.content), ['第一句。', '第二句！', 'Third sentence; fourth']);
  });

  it('makes tables chunks of their own, header repeated, in document order', () => {
    const rows = [['Name', 'Age'], ...Array.from({ length: 30 }, (_, i) => [`Person ${i}`, String(20 + i)])];
    const chunks = chunkDocument(
      doc([text('Before.'), table(rows, { positions: [pos(2, 100)] }), text('After.')]),
      'naive',
      { chunk_token_num: 40 },
      ctx,
    );
    assert.equal(chunks[0]!.content, 'Before.');
    assert.equal(chunks[chunks.length - 1]!.content, 'After.');
    const tableChunks = chunks.slice(1, -1);
    assert.ok(tableChunks.length > 1);
    for (const c of tableChunks) {
      assert.ok(c.content.startsWith('Name | Age\n'), c.content);
      assert.ok(countTokens(c.content) <= 40);
      assert.deepEqual(c.positions, [pos(2, 100)]);
    }
    assert.ok(tableChunks.map((c) => c.content).join('\n').includes('Person 29 | 49'));
  });

  it('renders tables as HTML when html4excel is on', () => {
    const chunks = chunkDocument(
      doc([table([['A', 'B'], ['1', '<2>']], { name: 'Sheet1' })]),
      'naive',
      { chunk_token_num: 128, html4excel: true },
      ctx,
    );
    assert.deepEqual(chunks.map((c) => c.content), [
      '<table><caption>Sheet1</caption><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>&lt;2&gt;</td></tr></table>',
    ]);
  });

  it('carries positions of the sections a chunk is made of', () => {
    const chunks = chunkDocument(
      doc([
        title('Heading', 1, { positions: [pos(1, 10)] }),
        text('Body one.', { positions: [pos(1, 30)] }),
        text('Body two.', { positions: [pos(2, 10)] }),
      ]),
      'naive',
      { chunk_token_num: 128 },
      ctx,
    );
    assert.deepEqual(chunks, [{ content: 'Heading\nBody one.\nBody two.', positions: [pos(1, 10), pos(1, 30), pos(2, 10)] }]);
  });

  it('gives images with text a chunk of their own with the image attached', () => {
    const bytes = new Uint8Array([1, 2, 3]);
    const chunks = chunkDocument(doc([text('Text.'), image('Figure 1: a bridge', bytes), image('', bytes)]), 'naive', {}, ctx);
    assert.equal(chunks.length, 2);
    assert.equal(chunks[1]!.content, 'Figure 1: a bridge');
    assert.equal(chunks[1]!.image, bytes);
  });

  it('keeps code whole when it fits', () => {
    const code = 'function f() {\n  return 1;\n}';
    const chunks = chunkDocument(doc([{ kind: 'code', text: code }]), 'naive', { chunk_token_num: 64, delimiter: ';' }, ctx);
    assert.deepEqual(chunks.map((c) => c.content), [code]);
  });

  it('uses the fallback size when chunk_token_num is absent', () => {
    const chunks = chunkDocument(doc([text(sentences(40))]), 'naive', {}, ctx);
    for (const c of chunks) assert.ok(countTokens(c.content) <= 128);
    assert.ok(chunks.length >= 4);
  });

  it('produces nothing for an empty document and never blank chunks', () => {
    assert.deepEqual(chunkDocument(doc([]), 'naive', {}, ctx), []);
    assert.deepEqual(chunkDocument(doc([text('  \n '), title(''), table([])]), 'naive', {}, ctx), []);
  });

  it('throws for an unknown method', () => {
    assert.throws(() => chunkDocument(doc([text('x')]), 'bogus' as never, {}, ctx), /unknown chunk method/);
  });
});
