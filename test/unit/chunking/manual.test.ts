import assert from 'node:assert/strict';
import { chunkDocument } from '../../../src/chunking/index.js';
import { headingLevel } from '../../../src/chunking/headings.js';
import { countTokens } from '../../../src/text/tokens.js';
import { doc, pos, sentences, table, text, title } from './build.js';

const ctx = { filename: 'manual.docx' };

describe('chunking manual', () => {
  it('splits by the heading hierarchy and starts each chunk with its heading path', () => {
    const chunks = chunkDocument(
      doc([
        text('Preface text.'),
        title('Installation', 1, { positions: [pos(1, 0)] }),
        title('Linux', 2),
        text('Use the package.', { positions: [pos(1, 20)] }),
        title('Windows', 2),
        text('Run the setup.'),
        title('Usage', 1),
        text('Start it.'),
      ]),
      'manual',
      { raptor: { use_raptor: false } },
      ctx,
    );
    assert.deepEqual(chunks.map((c) => c.content), [
      'Preface text.',
      'Installation\nLinux\nUse the package.',
      'Installation\nWindows\nRun the setup.',
      'Usage\nStart it.',
    ]);
    assert.deepEqual(chunks[1]!.positions, [pos(1, 20)]);
  });

  it('repeats the path on every piece of a long section within the token limit', () => {
    const chunks = chunkDocument(
      doc([title('Guide', 1), title('Configuration', 2), text(sentences(30))]),
      'manual',
      { chunk_token_num: 64 },
      ctx,
    );
    assert.ok(chunks.length > 3);
    for (const c of chunks) {
      assert.ok(c.content.startsWith('Guide\nConfiguration\n'));
      assert.ok(countTokens(c.content) <= 64);
    }
  });

  it('keeps a heading with no text only when no subheading follows', () => {
    const chunks = chunkDocument(doc([title('A', 1), title('A.1', 2), text('x'), title('B', 1)]), 'manual', {}, ctx);
    assert.deepEqual(chunks.map((c) => c.content), ['A\nA.1\nx', 'B']);
  });

  it('infers levels from numbering when titles have none', () => {
    assert.equal(headingLevel(title('2.3.1 Limits')), 3);
    assert.equal(headingLevel(title('Overview')), 1);
    assert.equal(headingLevel(title('3 Results', 2)), 2);
    const chunks = chunkDocument(doc([title('1 Setup'), title('1.1 Disk'), text('Format.'), title('2 Run'), text('Go.')]), 'manual', {}, ctx);
    assert.deepEqual(chunks.map((c) => c.content), ['1 Setup\n1.1 Disk\nFormat.', '2 Run\nGo.']);
  });

  it('gives tables under a heading their own chunk with the path', () => {
    const chunks = chunkDocument(doc([title('Specs', 1), table([['Key', 'Value'], ['RAM', '8 GB']])]), 'manual', {}, ctx);
    assert.deepEqual(chunks.map((c) => c.content), ['Specs\nKey | Value\nRAM | 8 GB']);
  });
});
