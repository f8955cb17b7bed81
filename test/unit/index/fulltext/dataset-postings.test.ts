import assert from 'node:assert/strict';
import type { Database } from 'better-sqlite3';
import { DatasetPostings, type PostingFilter, type PostingSourceRow, type WeightedStem } from '../../../../src/index/fulltext/dataset-postings.js';
import { idfOf } from '../../../../src/index/fulltext/fts5-bm25.js';
import { PostingsCache, type PostingsSource } from '../../../../src/index/fulltext/postings-cache.js';
import { openIndexDatabase } from '../../../../src/index/sqlite-database.js';
import { SqliteChunkIndex } from '../../../../src/index/chunks/sqlite-index.js';
import type { Candidate, ChunkFilter } from '../../../../src/index/chunks/chunk-index.js';
import { porterStem } from '../../../../src/retrieval/porter.js';
import { indexedWords, tokenize } from '../../../../src/retrieval/tokenizer.js';
import { random } from '../../../fixtures/generate.js';
import { chunk } from '../helpers.js';

/** Builds a due copy inside the search that found it due, so a test's next line sees it. */
const atOnce = (build: () => void) => build();

/** Words with shared stems, upper case, digits and non-ASCII letters, so that tokenizing and stemming matter. */
const VOCABULARY = (
  'solar Solar SOLAR efficiency efficient cells cell cellular turbine turbines wind winds running runner ran '
  + 'mitochondrial apoptosis glycolysis protein proteins β-cells µg naïve Café İstanbul ﬁnance x-ray covid19 3d h2o '
  + 'the of and a to in is for on with Ελληνικά Straße '
  // Other scripts, where unicode61 keeps what a Unicode normalisation would remove or split differently:
  // words that differ only by a Greek tonos, a Cyrillic breve or diaeresis, a dakuten; Hangul syllables.
  + 'άλφα αλφα Άλφα Σίσυφος ΣΊΣΥΦΟΣ йод иод Йод ёжик ежик 中文 日本語です がぎ かき 한국어 한국 हिन्दी 🤔'
).split(' ');

function text(next: () => number, words: number): string {
  return Array.from({ length: words }, () => VOCABULARY[Math.floor(next() ** 2 * VOCABULARY.length)]!).join(next() < 0.3 ? ', ' : ' ');
}

/** Questions beyond the Latin script, alone and mixed with English. */
const OTHER_SCRIPTS = [
  'Ελληνικά', 'άλφα', 'Σίσυφος αλφα', 'йод ёжик', '中文 日本語です', 'がぎ', '한국어', 'हिन्दी 🤔', 'solar άλφα йод 中文 한국 cells',
];

const QUESTIONS = [
  'solar efficiency?', 'Which cells run turbines', 'mitochondrial apoptosis in β-cells', 'naïve café finance',
  'x-ray of winds', 'covid19 3d h2o', 'İstanbul straße', 'proteins', 'efficient cellular running', ...OTHER_SCRIPTS,
];

/**
 * Hits as comparable data: id, score, dataset, document, name. Rows of equal score may come in another
 * order from FTS5, so they are put in id order.
 */
const asRows = (hits: Candidate[]) => hits
  .map((h) => [h.id, h.score, h.dataset_id, h.document_id, h.document_name] as const)
  .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));

describe('in-memory full text (fulltext/dataset-postings)', () => {
  let db: Database;
  let fts: SqliteChunkIndex;
  let memory: SqliteChunkIndex;

  beforeEach(async () => {
    db = openIndexDatabase(':memory:');
    fts = new SqliteChunkIndex(db, { postingsCacheBytes: 0 });
    memory = new SqliteChunkIndex(db, { postingsQuietMs: 0, postingsSchedule: atOnce });
    const next = random(11);
    await fts.upsert(Array.from({ length: 400 }, (_, i) => chunk({
      id: `c${String(i).padStart(3, '0')}`,
      dataset_id: `ds${i % 3}`,
      document_id: `doc${i % 7}`,
      document_name: `${text(next, 3)}.pdf`,
      content: text(next, 5 + Math.floor(next() * 60)),
      important_keywords: next() < 0.3 ? [text(next, 2), text(next, 1)] : [],
      questions: next() < 0.2 ? [text(next, 6)] : [],
      available: next() < 0.9,
    })));
  });
  afterEach(() => db.close());

  const postingsHeld = async (index: SqliteChunkIndex) => (await index.cacheSizes()).find((c) => c.name === 'postings')!;

  it("scores every hit exactly as FTS5's bm25() with the column weights (name ×5, content ×1, keywords ×15, questions ×10)", async () => {
    const filter: ChunkFilter = { datasetIds: ['ds0', 'ds1', 'ds2'] };
    let compared = 0;
    for (const question of QUESTIONS) {
      const expected = asRows(await fts.fullText(question, filter, 1000));
      const actual = asRows(await memory.fullText(question, filter, 1000));
      // Same rows with the same scores, bit for bit.
      assert.deepEqual(actual, expected, question);
      compared += expected.length;
    }
    assert.ok(compared > 500, `${compared} hits compared`);
    assert.ok((await postingsHeld(memory)).entries === 400, 'the three datasets were searched in memory');
    assert.equal((await postingsHeld(fts)).entries, 0, 'a bound of 0 keeps full text in FTS5');
  });

  it('answers questions in every script from the copies, with FTS5\'s hits and scores, without searching FTS5', async () => {
    const filter: ChunkFilter = { datasetIds: ['ds0', 'ds1', 'ds2'] };
    const expected = new Map<string, ReturnType<typeof asRows>>();
    for (const question of OTHER_SCRIPTS) expected.set(question, asRows(await fts.fullText(question, filter, 1000)));
    await memory.fullText('solar', filter, 10); // builds the copies
    const statements = (memory as unknown as { sql: Record<string, unknown> }).sql;
    for (const name of ['fullText', 'fullTextUnscoped']) {
      statements[name] = { all: () => { throw new Error(`searched with FTS5 (${name})`); } };
    }
    for (const question of OTHER_SCRIPTS) {
      const actual = asRows(await memory.fullText(question, filter, 1000));
      assert.ok(actual.length > 0, question);
      assert.deepEqual(actual, expected.get(question), question);
    }
  });

  it('keeps the best `limit` hits in bm25 order and honours datasets, documents and availability', async () => {
    const filters: ChunkFilter[] = [
      { datasetIds: ['ds1'] },
      { datasetIds: ['ds0', 'ds2'], availableOnly: true },
      { datasetIds: ['ds0', 'ds1', 'ds2'], documentIds: ['doc2', 'doc5'], availableOnly: true },
      { datasetIds: ['ds2'], documentIds: ['nope'] },
    ];
    for (const filter of filters) {
      for (const question of QUESTIONS) {
        const expected = await fts.fullText(question, filter, 15);
        const actual = await memory.fullText(question, filter, 15);
        const what = `${question} ${JSON.stringify(filter)}`;
        assert.deepEqual(actual.map((h) => h.score), expected.map((h) => h.score), what);
        for (const hit of actual) {
          assert.ok(filter.datasetIds.includes(hit.dataset_id), what);
          if (filter.documentIds) assert.ok(filter.documentIds.includes(hit.document_id), what);
        }
        if (filter.availableOnly) {
          const chunks = await memory.getMany(actual.map((h) => h.id));
          assert.ok(chunks.every((c) => c.available), what);
        }
      }
    }
  });

  it('sees every write at the next search (quiet period 0): upsert, update, rename, delete', async () => {
    const filter: ChunkFilter = { datasetIds: ['ds0', 'ds1'], availableOnly: true };
    const same = async (why: string) => {
      for (const question of QUESTIONS) assert.deepEqual(asRows(await memory.fullText(question, filter, 1000)), asRows(await fts.fullText(question, filter, 1000)), `${why}: ${question}`);
    };
    await same('before');
    await fts.upsert([chunk({ id: 'new', dataset_id: 'ds1', content: 'zeppelin solar solar efficiency' })]);
    assert.deepEqual((await memory.fullText('zeppelin', filter, 5)).map((h) => h.id), ['new']);
    await fts.update('c000', { available: false, content: 'zeppelin' });
    await same('after update');
    await fts.renameDocument('doc3', 'zeppelin manual.pdf');
    await same('after rename');
    await fts.deleteByDocument('doc1');
    await fts.deleteChunks(['new']);
    await same('after deletes');
    assert.equal((await memory.fullText('zeppelin', filter, 50)).every((h) => h.document_id === 'doc3'), true);
  });

  it('searches with FTS5 when a copy would not fit the bound, with the same hits', async () => {
    const bounded = new SqliteChunkIndex(db, { postingsQuietMs: 0, postingsCacheBytes: 20_000, postingsSchedule: atOnce });
    const filter: ChunkFilter = { datasetIds: ['ds0', 'ds1', 'ds2'] };
    for (const question of QUESTIONS.slice(0, 3)) {
      assert.deepEqual(asRows(await bounded.fullText(question, filter, 10)).map((r) => r[1]), asRows(await fts.fullText(question, filter, 10)).map((r) => r[1]));
    }
    assert.equal((await postingsHeld(bounded)).entries, 0);
  });
});

describe('bounded top-k full text (MaxScore) against scoring every posting', () => {
  /** Common and rare words, so that some lists are long enough to be pruned and others decide the top. */
  const WORDS = Array.from({ length: 300 }, (_, i) => `w${i.toString(36)}x`);
  const TEMPLATES = ['w0x w1x w2x', 'w1x w1x w5x w9x', 'w3x w4x w0x w0x w0x'];

  /** `availableShare` 1: every row available, so the availability filter passes every row (no call per row). */
  function corpus(seed: number, size: number, availableShare = 0.85) {
    const next = random(seed);
    const words = (count: number) => Array.from({ length: count }, () => WORDS[Math.floor(next() ** 3 * WORDS.length)]!).join(' ');
    const rows: PostingSourceRow[] = Array.from({ length: size }, (_, i) => {
      // A fifth of the rows are copies of a few templates: equal scores, so limits cut through ties.
      const template = next() < 0.2 ? TEMPLATES[i % TEMPLATES.length] : undefined;
      return {
        rowid: i + 1,
        id: `r${i}`,
        document_id: `d${i % 13}`,
        document_name: template ? 'same' : words(2),
        available: next() < availableShare ? 1 : 0,
        content: template ?? words(3 + Math.floor(next() * 40)),
        important_keywords: JSON.stringify(!template && next() < 0.2 ? [words(1)] : []),
        questions: JSON.stringify(!template && next() < 0.1 ? [words(5)] : []),
      };
    });
    return { next, postings: DatasetPostings.build('ds', rows) };
  }

  function question(next: () => number, postings: DatasetPostings): WeightedStem[] {
    const count = 1 + Math.floor(next() * 8);
    const stems = Array.from({ length: count }, () => (next() < 0.05 ? 'absent' : WORDS[Math.floor(next() ** 2 * WORDS.length)]!));
    if (next() < 0.2) stems.push(stems[0]!); // a repeated word counts twice, in its place
    return stems.map((stem) => {
      const n = postings.rowsWith(stem);
      return { stem, idf: idfOf(Math.log((postings.rowCount - n + 0.5) / (n + 0.5))) };
    });
  }

  it('returns the same hits, scores (bit for bit) and order for random questions, limits and filters', () => {
    let pruned = 0;
    let every = 0;
    let compared = 0;
    for (const [seed, availableShare] of [[1, 0.85], [2, 0.85], [3, 1]] as const) {
      const { next, postings } = corpus(seed, 3000, availableShare);
      const averageLength = postings.tokenCount / postings.rowCount;
      for (let q = 0; q < 150; q++) {
        const words = question(next, postings);
        // The table's average may be another dataset's too: not always this copy's.
        const totals = { rowCount: postings.rowCount, averageLength: next() < 0.3 ? averageLength * (0.5 + next()) : averageLength };
        const limit = [1, 2, 10, 30, 100, 1024, 5000][Math.floor(next() * 7)]!;
        const filter: PostingFilter = {
          availableOnly: next() < 0.5,
          documentIds: next() < 0.3 ? new Set(Array.from({ length: 1 + Math.floor(next() * 5) }, () => `d${Math.floor(next() * 14)}`)) : undefined,
        };
        const prunedCounters = { postings: 0, probes: 0 };
        const everyCounters = { postings: 0, probes: 0 };
        const expected = postings.searchEveryPosting(words, totals, filter, limit, everyCounters);
        const actual = postings.search(words, totals, filter, limit, prunedCounters);
        assert.deepEqual(actual, expected, `seed ${seed} question ${q}: ${words.map((w) => w.stem).join(' ')} limit ${limit} ${JSON.stringify({ ...filter, documentIds: filter.documentIds && [...filter.documentIds] })}`);
        pruned += prunedCounters.postings;
        every += everyCounters.postings;
        compared += expected.length;
      }
    }
    assert.ok(compared > 50_000, `${compared} hits compared`);
    assert.ok(pruned < every / 2, `the bounds spared reading most postings (${pruned} of ${every})`);
  });

  it('keeps every row tied at the cut in row order, as the exhaustive search does', () => {
    const rows: PostingSourceRow[] = Array.from({ length: 2000 }, (_, i) => ({
      rowid: i + 1, id: `r${i}`, document_id: 'd', document_name: 'n', available: 1,
      content: i % 100 === 0 ? 'rare common' : 'common filler', important_keywords: '[]', questions: '[]',
    }));
    const postings = DatasetPostings.build('ds', rows);
    const totals = { rowCount: 2000, averageLength: postings.tokenCount / 2000 };
    const words = ['common', 'rare', 'common'].map((stem) => ({ stem, idf: idfOf(Math.log((2000 - postings.rowsWith(stem) + 0.5) / (postings.rowsWith(stem) + 0.5))) }));
    for (const limit of [5, 20, 21, 25, 1000]) {
      const hits = postings.search(words, totals, {}, limit);
      assert.deepEqual(hits, postings.searchEveryPosting(words, totals, {}, limit), `limit ${limit}`);
      assert.equal(hits.length, limit);
    }
    assert.deepEqual(postings.search(words, totals, {}, 25).slice(20).map((h) => h[0]), ['r1', 'r2', 'r3', 'r4', 'r5']);
  });

  it('keeps the rows whose exact scores reach the cut when the Float32 sums round them the other way (near-ties)', () => {
    // Three words with the same idf; rows hold two of them, one once and one twice, in every arrangement:
    // the same exact score, which the Float32 sums (added in bound order) may round an ulp apart. Under a
    // huge average length the rows' lengths move the exact scores by less than that ulp, so the Float32
    // sums put rows on the wrong side of the cut (at the last cut, and at the pruning after the scan when
    // c or e is probed: "a c c" rows then reach θ only through c's bound).
    const next = random(5);
    const rows: PostingSourceRow[] = Array.from({ length: 5000 }, (_, i) => {
      const content = ['a b b', 'a a b', 'a c c', 'a c c', 'b c c', 'b c c', 'y', 'y', 'y', 'y'][i % 10]!;
      return {
        rowid: i + 1, id: `r${i}`, document_id: 'd', document_name: 'n', available: 1,
        content: content + (next() < 0.5 ? ' e' : '') + ' z'.repeat(1 + Math.floor(next() * 200)), important_keywords: '[]', questions: '[]',
      };
    });
    const postings = DatasetPostings.build('ds', rows);
    const idf = (stem: string) => idfOf(Math.log((5000 - postings.rowsWith(stem) + 0.5) / (postings.rowsWith(stem) + 0.5)));
    let compared = 0;
    for (const averageLength of [1e6, 1e7, 1e8, 3e8, 1e9]) {
      const totals = { rowCount: 5000, averageLength };
      for (const stems of ['a b', 'b a', 'a b c', 'c b a', 'a b c e', 'e c b a']) {
        const words = stems.split(' ').map((stem) => ({ stem, idf: idf(stem) }));
        for (const limit of [10, 100, 333, 700, 1500]) {
          assert.deepEqual(postings.search(words, totals, {}, limit), postings.searchEveryPosting(words, totals, {}, limit), `${stems} limit ${limit} avgdl ${averageLength}`);
          compared++;
        }
      }
    }
    assert.equal(compared, 150);
  });
});

describe('indexedWords', () => {
  it('finds the words tokenize finds, on ASCII and other text', () => {
    for (const sample of ['Café—NAÏVE, x-ray 3.5 µg', 'plain ASCII text,\nwith lines\tand TABS', 'β-cells İstanbul ﬁnance Straße', '', '...', 'Σίσυφος йод 中文，한국어 हिन्दी 🤔😀']) {
      assert.deepEqual(indexedWords(sample), tokenize(sample).map((t) => t.word), sample);
    }
  });
});

describe('porterStem on words with non-ASCII letters', () => {
  it('stems them as FTS5 does, byte by byte ("straße" → "straß"), so that their postings are FTS5\'s', () => {
    const words = ['straße', 'größeren', 'fußballs', 'ﬁnances', 'añadidos', 'ελληνικα', 'βcells'];
    const db = openIndexDatabase(':memory:');
    db.exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'porter unicode61');
             CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');`);
    words.forEach((word, i) => db.prepare('INSERT INTO t (rowid, x) VALUES (?, ?)').run(i + 1, word));
    const terms = db.prepare('SELECT term FROM v ORDER BY doc').pluck().all() as string[];
    db.close();
    assert.deepEqual(words.map((w) => tokenize(w).map((t) => t.stem).join(' ')), terms);
    assert.equal(porterStem('straße'), 'straß');
  });
});

describe('PostingsCache', () => {
  const row = (rowid: number, content: string): PostingSourceRow => ({
    rowid, id: `r${rowid}`, document_id: 'd', document_name: 'n', available: 1, content, important_keywords: '[]', questions: '[]',
  });

  function fakeSource(chunks = 10) {
    const state = { generation: 1, builds: 0, buildMs: 0, clock: 0 };
    const source: PostingsSource = {
      generations: (ids) => new Map(ids.map((id) => [id, state.generation])),
      chunkCount: () => chunks,
      build: (id) => {
        state.builds++;
        state.clock += state.buildMs;
        return { generation: state.generation, postings: DatasetPostings.build(id, Array.from({ length: chunks }, (_, i) => row(i + 1, 'alpha beta'))) };
      },
    };
    return { state, source, now: () => state.clock };
  }

  it('never builds inside a search: the search that finds a copy due answers from FTS5, the build runs after it, once', () => {
    const { state, source } = fakeSource();
    const pending: (() => void)[] = [];
    const cache = new PostingsCache(source, { maxBytes: 1e6, quietMs: 0, schedule: (build) => void pending.push(build) });
    assert.equal(cache.current(['ds'], 2), undefined, 'FTS5 for the search that found the copy due');
    assert.equal(cache.current(['ds'], 2), undefined, 'and for searches before the build ran');
    assert.equal(state.builds, 0);
    assert.equal(pending.length, 1, 'one build scheduled, however many searches found it due');
    pending.shift()!();
    assert.equal(state.builds, 1);
    assert.equal(cache.current(['ds'], 2)?.length, 1, 'the copy serves the next search');
  });

  it('a scheduled build that fails is reported and scheduled again by a later search', () => {
    const { source } = fakeSource();
    const pending: (() => void)[] = [];
    const errors: unknown[] = [];
    let fail = true;
    const flaky: PostingsSource = { ...source, build: (id) => { if (fail) throw new Error('disk I/O error'); return source.build(id); } };
    const cache = new PostingsCache(flaky, { maxBytes: 1e6, quietMs: 0, schedule: (build) => void pending.push(build), onBuildError: (err) => void errors.push(err) });
    cache.current(['ds'], 2);
    pending.shift()!();
    assert.match(String(errors[0]), /disk I\/O error/);
    fail = false;
    assert.equal(cache.current(['ds'], 2), undefined);
    pending.shift()!();
    assert.equal(cache.current(['ds'], 2)?.length, 1);
  });

  it('builds a copy only once its dataset has gone unwritten for the quiet period, and rebuilds after a write the same way', () => {
    const { state, source, now } = fakeSource();
    const cache = new PostingsCache(source, { maxBytes: 1e6, quietMs: 1000, now, schedule: atOnce });
    assert.equal(cache.current(['ds'], 2), undefined, 'first seen: not yet');
    state.clock += 999;
    assert.equal(cache.current(['ds'], 2), undefined, 'written 999 ms ago');
    state.clock += 1;
    assert.equal(cache.current(['ds'], 2)?.length, 1, 'quiet for 1 s: built');
    assert.equal(state.builds, 1);
    state.generation++;
    assert.equal(cache.current(['ds'], 2), undefined, 'stale copy is not used');
    state.clock += 1000;
    assert.equal(cache.current(['ds'], 2)?.length, 1);
    assert.equal(state.builds, 2);
    assert.equal(cache.current(['ds'], 2)?.length, 1, 'current copy reused');
    assert.equal(state.builds, 2);
  });

  it('waits ten times the last build time before rebuilding a dataset whose builds are slow', () => {
    const { state, source, now } = fakeSource();
    const cache = new PostingsCache(source, { maxBytes: 1e6, quietMs: 10, now, schedule: atOnce });
    state.buildMs = 500;
    cache.current(['ds'], 2);
    state.clock += 10;
    assert.equal(cache.current(['ds'], 2)?.length, 1);
    state.generation++;
    cache.current(['ds'], 2);
    state.clock += 4_999;
    assert.equal(cache.current(['ds'], 2), undefined);
    state.clock += 1;
    assert.equal(cache.current(['ds'], 2)?.length, 1);
  });

  it('builds only while no other connection of the process is building (shared lock), and frees the lock after', () => {
    const { state, source } = fakeSource();
    const lock = new Int32Array(new SharedArrayBuffer(4));
    const cache = new PostingsCache(source, { maxBytes: 1e6, quietMs: 0, buildLock: lock, threadId: 3, schedule: atOnce });
    Atomics.store(lock, 0, 8); // another thread (id 7) is building
    assert.equal(cache.current(['ds'], 2), undefined, 'FTS5 meanwhile');
    assert.equal(state.builds, 0);
    Atomics.store(lock, 0, 0);
    assert.equal(cache.current(['ds'], 2)?.length, 1);
    assert.equal(state.builds, 1);
    assert.equal(Atomics.load(lock, 0), 0, 'released');
    const failing = new PostingsCache({ ...source, build: () => { throw new Error('disk I/O error'); } }, { maxBytes: 1e6, quietMs: 0, buildLock: lock, schedule: atOnce });
    assert.throws(() => failing.current(['other'], 2), /disk I\/O error/);
    assert.equal(Atomics.load(lock, 0), 0, 'released after a failed build');
  });

  it('does not build a dataset whose estimated copy exceeds the bound, and drops least recently used copies to fit', () => {
    const { source } = fakeSource(1_000);
    const small = new PostingsCache(source, { maxBytes: 1_000, quietMs: 0, schedule: atOnce });
    assert.equal(small.current(['ds'], 2), undefined);
    assert.equal(small.size().builds, 0, 'not even attempted');
    const one = DatasetPostings.build('x', Array.from({ length: 1_000 }, (_, i) => row(i + 1, 'alpha beta'))).bytes;
    const cache = new PostingsCache(source, { maxBytes: Math.floor(one * 2.5), quietMs: 0, schedule: atOnce });
    for (const id of ['a', 'b', 'c', 'a']) assert.equal(cache.current([id], 2)?.length, 1, id);
    assert.equal(cache.size().datasets, 2, 'two copies fit');
    assert.ok(cache.size().bytes <= one * 2.5);
  });
});
