import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadBeir } from '../../../bench/quality/beir.js';
import { ndcgAt, recallAt } from '../../../bench/quality/metrics.js';

describe('bench/quality metrics (BEIR)', () => {
  it('nDCG@k uses the relevance grades as gains, against the ideal order of the grades', () => {
    const grades = new Map([['a', 2], ['b', 1]]);
    assert.equal(ndcgAt(10, ['a', 'b'], grades), 1);
    const dcg = 1 / Math.log2(2) + 2 / Math.log2(3);
    const ideal = 2 / Math.log2(2) + 1 / Math.log2(3);
    assert.equal(ndcgAt(10, ['b', 'a'], grades), dcg / ideal);
    assert.equal(ndcgAt(1, ['x', 'a'], grades), 0, 'only the first k count');
    assert.equal(ndcgAt(10, ['a'], new Map()), 0);
  });

  it('recall@k counts documents with a positive grade', () => {
    assert.equal(recallAt(2, ['a', 'x', 'b'], new Map([['a', 2], ['b', 1]])), 0.5);
  });

  it('loads any BEIR folder with graded qrels, keeping only judged queries', () => {
    const dir = mkdtempSync(join(tmpdir(), 'beir-'));
    try {
      mkdirSync(join(dir, 'qrels'));
      writeFileSync(join(dir, 'corpus.jsonl'), '{"_id":"d1","title":"T","text":"one"}\n{"_id":2,"text":"two"}\n');
      writeFileSync(join(dir, 'queries.jsonl'), '{"_id":"q1","text":"first"}\n{"_id":"q2","text":"unjudged"}\n');
      writeFileSync(join(dir, 'qrels', 'test.tsv'), 'query-id\tcorpus-id\tscore\r\nq1\td1\t2\r\nq1\t2\t1\r\nq1\td3\t0\r\n');
      const beir = loadBeir(dir);
      assert.deepEqual(beir.corpus, [{ id: 'd1', title: 'T', text: 'one' }, { id: '2', title: '', text: 'two' }]);
      assert.deepEqual(beir.queries, [{ id: 'q1', text: 'first' }]);
      assert.deepEqual([...beir.qrels.get('q1')!], [['d1', 2], ['2', 1]]);
      rmSync(join(dir, 'queries.jsonl'));
      assert.throws(() => loadBeir(dir), /queries\.jsonl is missing/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
