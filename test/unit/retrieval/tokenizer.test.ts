import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { highlight } from '../../../src/retrieval/highlight.js';
import { porterStem } from '../../../src/retrieval/porter.js';
import { indexedWords, queryTerms, tokenize } from '../../../src/retrieval/tokenizer.js';
import { seededRandom } from '../../../src/seeded-random.js';

/** The terms FTS5's `porter unicode61` tokenizer (or another) produces for each text. */
function fts5Terms(texts: string[], tokenizer = 'porter unicode61'): string[][] {
  const db = new Database(':memory:');
  db.exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize = '${tokenizer}');
           CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');`);
  const insert = db.prepare('INSERT INTO t (rowid, x) VALUES (?, ?)');
  texts.forEach((text, i) => insert.run(i + 1, text));
  const terms: string[][] = texts.map(() => []);
  for (const [doc, term] of db.prepare('SELECT doc, term FROM v ORDER BY doc, offset').raw().iterate() as Iterable<[number, string]>) {
    terms[doc - 1]!.push(term);
  }
  db.close();
  return terms;
}

describe('porterStem', () => {
  it('stems textbook Porter examples', () => {
    const cases: Record<string, string> = {
      caresses: 'caress', ponies: 'poni', ties: 'ti', cats: 'cat', feed: 'feed', agreed: 'agre',
      plastered: 'plaster', motoring: 'motor', sing: 'sing', conflated: 'conflat', troubled: 'troubl',
      sized: 'size', hopping: 'hop', falling: 'fall', filing: 'file', happy: 'happi', relational: 'relat',
      conditional: 'condit', generalization: 'gener', electrical: 'electr', adjustment: 'adjust', controll: 'control',
    };
    for (const [word, stem] of Object.entries(cases)) assert.equal(porterStem(word), stem, word);
  });

  it('produces exactly the terms FTS5 porter produces', () => {
    const words = [
      'running', 'runner', 'runs', 'ran', 'efficiency', 'efficient', 'analysis', 'analyses', 'analyzing',
      'biological', 'logically', 'probability', 'sensibility', 'decisiveness', 'hopefulness', 'callousness',
      'formality', 'sensitivity', 'triplicate', 'formative', 'formalize', 'electricity', 'electrical', 'hopeful',
      'goodness', 'revival', 'allowance', 'inference', 'airliner', 'gyroscopic', 'adjustable', 'defensible',
      'irritant', 'replacement', 'dependent', 'adoption', 'homologou', 'communism', 'activate', 'angulariti',
      'homologous', 'effective', 'bowdlerize', 'probate', 'rate', 'cease', 'controlling', 'rolling', 'yes',
      'skies', 'dying', 'lying', 'ox', 'a', 'by', 'i', 'xyzzy', 'sses', 'ied', 'eed', 'ing', 'ational', 'abli',
      'bli', 'logi', 'alli', 'entli', 'eli', 'ousli', 'ization', 'ation', 'ator', 'alism', 'iveness', 'fulness',
      'ousness', 'aliti', 'iviti', 'biliti', 'icate', 'ative', 'alize', 'iciti', 'ical', 'ful', 'ness', 'ion',
      'sion', 'tion', 'cancers', 'mutations', 'mitochondrial', 'apoptosis', 'glycolysis', 'x' + 'y'.repeat(70),
      'covid19', '3d', 'h2o', 'ūnicode', 'café', 'naïve',
    ];
    const expected = fts5Terms(words);
    words.forEach((word, i) => assert.deepEqual(tokenize(word).map((t) => t.stem), expected[i], word));
  });
});

describe('tokenizer', () => {
  it('splits on non-alphanumerics, lowercases, removes diacritics and keeps offsets', () => {
    const text = 'Café—NAÏVE, x-ray 3.5 µg';
    assert.deepEqual(tokenize(text).map((t) => [t.word, text.slice(t.start, t.end)]), [
      ['cafe', 'Café'], ['naive', 'NAÏVE'], ['x', 'x'], ['ray', 'ray'], ['3', '3'], ['5', '5'], ['μg', 'µg'],
    ]);
  });

  it('tokenizes long texts the way FTS5 does', () => {
    const text = 'The Mitochondria\'s role: ATP-synthesis, in 2024 (Ünïcödé test) — "quoted" words_underscored.';
    assert.deepEqual(tokenize(text).map((t) => t.stem), fts5Terms([text])[0]);
  });

  it('query terms drop stopwords and repeat stems, keeping the typed word', () => {
    assert.deepEqual(queryTerms('What is the effect of running and runs on the Runner?'), [
      { word: 'effect', stem: 'effect' }, { word: 'running', stem: 'run' }, { word: 'runner', stem: 'runner' },
    ]);
    assert.deepEqual(queryTerms('  the of  '), []);
    assert.deepEqual(queryTerms('not no more'), [{ word: 'not', stem: 'not' }, { word: 'no', stem: 'no' }, { word: 'more', stem: 'more' }]);
  });

  it('highlights words sharing a stem with the query', () => {
    assert.equal(
      highlight('Runners were running; a run-off.', new Set(['run'])),
      'Runners were <em>running</em>; a <em>run</em>-off.',
    );
    assert.equal(highlight('nothing here', new Set(['run'])), 'nothing here');
  });
});

describe('tokenizer: every script as FTS5 unicode61 (remove_diacritics=1)', () => {
  it('splits and folds every code point of the BMP, the SMP and the tags plane, and a sample beyond, as unicode61 does', function () {
    this.timeout(20_000);
    const codePoints: number[] = [];
    for (let c = 0x80; c <= 0x10ffff; c++) {
      const plane = c >> 16;
      if ((c < 0xd800 || c > 0xdfff) && (plane <= 1 || (c >= 0xe0000 && c <= 0xe01ff) || c % 61 === 0)) codePoints.push(c);
    }
    // Each code point at the start of a word and inside one: "xqxq" is one word, "qq" (a diacritic inside
    // words only) or the words "q" "q" (a separator).
    const texts: string[] = [];
    for (let i = 0; i < codePoints.length; i += 4096) {
      texts.push(codePoints.slice(i, i + 4096).map((c) => `${String.fromCodePoint(c)}q`.repeat(2)).join(' '));
    }
    const expected = fts5Terms(texts, 'unicode61');
    texts.forEach((text, i) => {
      const actual = indexedWords(text);
      const at = actual.findIndex((word, k) => word !== expected[i]![k]);
      const where = `the text of the code points from U+${codePoints[i * 4096]!.toString(16)}`;
      if (at >= 0) assert.deepEqual(actual.slice(at, at + 3), expected[i]!.slice(at, at + 3), `words ${at}… of ${where}`);
      assert.equal(actual.length, expected[i]!.length, where);
    });
  });

  /**
   * Pieces of text in many scripts, precomposed and decomposed, with what unicode61 treats specially: Latin
   * letters with one and two diacritics and without a decomposition (đ ø ł), Greek tonos, dialytika and final
   * sigma, Cyrillic й ё, pointed Hebrew and Arabic, Devanagari and Thai vowel signs (separators for unicode61),
   * CJK, kana with dakuten, Hangul syllables and jamo, combining marks on their own, digits of other scripts,
   * emoji old (separators) and new (words for SQLite's Unicode 6.1 tables), private use, scripts that case
   * folding in SQLite's tables does not know (Cherokee, Georgian Mtavruli), lone surrogates.
   */
  const PIECES = [
    'Café', 'cafe\u0301', 'NAÏVE', 'Ǖber', 'ǖ', 'đường', 'Øresund', 'Łódź', 'İstanbul', 'ıi', 'Straße', 'ﬁnance', 'Æsir', 'œuvre', 'ǅemal',
    'Σίσυφος', 'ΣΊΣΥΦΟΣ', 'άλφα', 'αλφα', 'ΐ', 'Ϊ', 'ϊ', 'ς', 'α\u0301', 'ϐ', 'µg', 'ὕδωρ',
    'йод', 'ЙОД', 'ЁЖИК', 'ёжик', 'и\u0306', 'е\u0308', 'Ѐ',
    'שָׁלוֹם', 'שלום', 'مَرْحَبًا', 'مرحبا', 'हिन्दी', 'ภาษาไทย', 'สวัสดี',
    '中文字符', '日本語です', 'がぎ', 'か\u3099', 'ｶﾞ', '，', '。', '한국어', '\u1112\u1161\u11ab',
    '\u0301', '\u0300\u0301', '\u20dd', '\u0345', 'x\u0301', '\u0308x',
    '１２', '٣٤', '۴', '४२', '๓', '߁', 'Ⅻ', 'ＡＢＣ',
    '😀', '🤔', '👍🏽', '👨\u200d👩\u200d👧', '🇫🇷', '❤️', '\ue000', '\u{f0000}', '\u{100000}',
    '𐐀𐐨', 'Ꭰ', 'ꭰ', 'Ა', 'Ա', 'Ⓐ', '\u00ad', '\u200d', '\u00a0', '\ufeff', '\ud800', '\udfff',
    'running', 'THE', 'x-ray', '3.5', 'h2o', 'relational',
  ];
  const JOINERS = [' ', ' ', '', '-', ', ', '\n', '_', '.'];

  it('produces exactly the terms FTS5 produces for random multi-script text, at the same places', () => {
    const next = seededRandom(17);
    const pick = <T>(items: T[]) => items[Math.floor(next() * items.length)]!;
    const texts = Array.from({ length: 400 }, () => Array.from({ length: 1 + Math.floor(next() * 12) }, () => pick(PIECES) + pick(JOINERS)).join(''));
    const expected = fts5Terms(texts);
    texts.forEach((text, i) => {
      const tokens = tokenize(text);
      assert.deepEqual(tokens.map((t) => t.stem), expected[i], JSON.stringify(text));
      assert.deepEqual(indexedWords(text), tokens.map((t) => t.word), JSON.stringify(text));
      // Offsets cover the word as written: it is the whole word of its text.
      for (const t of tokens) assert.deepEqual(tokenize(text.slice(t.start, t.end)).map((w) => w.word), [t.word], JSON.stringify(text));
    });
  });

  it('keeps Greek tonos, Cyrillic й and kana dakuten, and splits Devanagari at its vowel signs, as FTS5 does', () => {
    assert.deepEqual(tokenize('Σίσυφος ΣΊΣΥΦΟΣ άλφα').map((t) => t.word), ['σίσυφοσ', 'σίσυφοσ', 'άλφα']);
    assert.deepEqual(tokenize('Йод ёжик がぎ').map((t) => t.word), ['йод', 'ёжик', 'がぎ']);
    assert.deepEqual(tokenize('हिन्दी').map((t) => t.word), ['ह', 'न', 'द']);
    assert.deepEqual(tokenize('cafe\u0301 ǖ đ 🤔 😀').map((t) => t.word), ['cafe', 'ǖ', 'đ', '🤔']);
  });
});
