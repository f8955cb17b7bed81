import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BertTokenizer } from '@huggingface/transformers';
import { loadTokenizer, TOKENIZER_CONFIG } from '../../../src/models/builtin/encoder.js';
import { locateModelFiles } from '../../../src/models/builtin/locate.js';
import { MINILM_L6_V2 } from '../../../src/models/builtin/spec.js';

const EDGE_CASES = [
  '',
  '   ',
  'Hello, World!',
  'Crème brûlée à la café — naïve résumé, ÅNGSTRÖM İstanbul',
  '東京都は日本の首都です。北京欢迎你 안녕하세요 세계 สวัสดีครับ مرحبا بالعالم नमस्ते दुनिया',
  'Ünïcödé ΑΒΓ ЖЗИ ﬁ ﬂ ﬀ ﬃ ½ ² ℃ Ⅻ ⓐ ① ｆｕｌｌｗｉｄｔｈ ǅ ǈ x\u0301y\u0308',
  'emoji 😀👍🏽 family 👨‍👩‍👧 flags 🇫🇷',
  'tabs\tand\nnewlines\r\n  spaces\u00a0nbsp\u3000ideographic',
  '\u0000\u0001control\u200bzero-width\u00adsoft-hyphen\ufeffbom\ufffdreplacement',
  `${'a'.repeat(150)} a word longer than WordPiece's 100 characters`,
  "don't can't I'm it's — “quoted” ‘single’ «guillemets»",
  'https://example.com/path?q=1&b=2#frag user@mail.com C:\\Windows\\path',
  '3.14159 1,000,000 $5.00 50% #hashtag @mention 2026-11-23T23:10:00Z',
  '[CLS] [SEP] [MASK] [PAD] [UNK] written in the text',
  `ok ${'supercalifragilisticexpialidocious '.repeat(40)}`,
];

/** Paragraphs of the repository's own documentation: prose, code, tables and tokens of every kind. */
function documentationParagraphs(): string[] {
  const root = new URL('../../../', import.meta.url).pathname;
  const files = [join(root, 'README.md'), ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join(root, 'docs', f))];
  return files.flatMap((f) => readFileSync(f, 'utf8').split(/\n\s*\n/));
}

describe('models/builtin tokenizer', () => {
  it('gives the token ids of transformers.js for the same tokenizer.json, on every kind of text', async () => {
    const { tokenizer: path } = locateModelFiles(MINILM_L6_V2);
    const reference = new BertTokenizer(JSON.parse(readFileSync(path, 'utf8')), TOKENIZER_CONFIG);
    const tokenizer = await loadTokenizer(path);
    const texts = [...EDGE_CASES, ...documentationParagraphs()];
    assert.ok(texts.length > 300, `${texts.length} texts`);
    for (const text of texts) assert.deepEqual(tokenizer.encode(text), reference.encode(text), JSON.stringify(text.slice(0, 80)));
  });
});
