import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { highlight } from '../../../src/retrieval/highlight.js';
import { porterStem } from '../../../src/retrieval/porter.js';
import { queryTerms, tokenize } from '../../../src/retrieval/tokenizer.js';

/** The terms FTS5's `porter unicode61` tokenizer produces for each text. */
function fts5Terms(texts: string[]): string[][] {
  const db = new Database(':memory:');
  db.exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'porter unicode61');
           CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');`);
  const insert = db.prepare('INSERT INTO t (rowid, x) VALUES (?, ?)');
  texts.forEach((text, i) => insert.run(i + 1, text));
  const rows = db.prepare('SELECT doc, term FROM v ORDER BY doc, offset').all() as { doc: number; term: string }[];
  return texts.map((_, i) => rows.filter((r) => r.doc === i + 1).map((r) => r.term));
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
