import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../../src/config.js';
import { openBackends, type Backends } from '../../../src/wiring.js';
import type { IndexedChunk } from '../../../src/index/chunks/chunk-index.js';
import { chunk as testChunk } from '../index/helpers.js';

const chunk = (i: number, datasetId: string): IndexedChunk => testChunk({
  id: `chunk${datasetId}${i}`,
  tenant_id: 't',
  dataset_id: datasetId,
  document_id: `doc-${datasetId}`,
  document_name: 'doc.txt',
  content: `granite cairn ${i}`,
  vector: Array.from({ length: 384 }, (_, d) => Math.sin(i + d)),
});

/** CAIRN_CACHE_* reach the caches they bound (docs/operations.md, "Memory"). */
describe('cache bounds from configuration', function () {
  this.timeout(60_000);

  it('reads CAIRN_CACHE_* with their defaults, and refuses values the caches cannot use', () => {
    assert.deepEqual(loadConfig({ CAIRN_DATA_DIR: '/tmp/x' }).caches, { signBitsMb: 64, termFrequencies: 50_000, modelClients: 256 });
    const set = loadConfig({ CAIRN_DATA_DIR: '/tmp/x', CAIRN_CACHE_SIGN_BITS_MB: '0.5', CAIRN_CACHE_TERM_FREQUENCIES: '100', CAIRN_CACHE_MODEL_CLIENTS: '3' });
    assert.deepEqual(set.caches, { signBitsMb: 0.5, termFrequencies: 100, modelClients: 3 });
    assert.throws(() => loadConfig({ CAIRN_CACHE_SIGN_BITS_MB: '0' }), /CAIRN_CACHE_SIGN_BITS_MB="0": expected a positive number/);
    assert.throws(() => loadConfig({ CAIRN_CACHE_TERM_FREQUENCIES: 'many' }), /CAIRN_CACHE_TERM_FREQUENCIES="many"/);
    assert.throws(() => loadConfig({ CAIRN_CACHE_MODEL_CLIENTS: '0' }), /CAIRN_CACHE_MODEL_CLIENTS="0"/);
  });

  describe('in the backends openBackends builds', () => {
    let dataDir: string;
    let backends: Backends | undefined;
    beforeEach(() => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-cache-settings-'));
    });
    afterEach(async () => {
      await backends?.close();
      backends = undefined;
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it('keeps at most CAIRN_CACHE_MODEL_CLIENTS model clients', async () => {
      backends = await openBackends(loadConfig({ CAIRN_DATA_DIR: dataDir, CAIRN_CACHE_MODEL_CLIENTS: '1' }));
      const tenant = 'd'.repeat(32);
      await backends.models.embedding(tenant, 'BAAI/bge-small-en-v1.5@Builtin');
      await backends.models.chat(tenant, 'SmolLM2-135M-Instruct@Builtin');
      assert.equal(backends.models.size, 1);
    });

    it('keeps the chunk frequencies of at most CAIRN_CACHE_TERM_FREQUENCIES words', async () => {
      backends = await openBackends(loadConfig({ CAIRN_DATA_DIR: dataDir, CAIRN_INDEX_THREADS: '0', CAIRN_CACHE_TERM_FREQUENCIES: '3' }));
      const { index } = backends;
      await index.upsert([{ ...chunk(1, 'a'), content: 'amber basalt cedar delta ember fjord glacier harbor' }]);
      for (const question of ['amber basalt', 'cedar delta', 'ember fjord', 'glacier harbor']) {
        assert.equal((await index.fullText(question, { datasetIds: ['a'] }, 5)).length, 1);
        const cached = (await index.cacheSizes!()).find((c) => c.name === 'term_frequencies')!;
        assert.ok(cached.entries > 0 && cached.entries <= 3, `${cached.entries} words after "${question}"`);
      }
    });

    for (const threads of ['0', '1']) {
      it(`keeps the chunk index's sign bits within CAIRN_CACHE_SIGN_BITS_MB (${threads === '0' ? 'on the event loop' : 'in a reader thread'})`, async () => {
        // 300 vectors of 384 dims: 300 x (8 + 1 + 48) = 17,100 bytes per dataset; the bound holds one dataset.
        backends = await openBackends(loadConfig({ CAIRN_DATA_DIR: dataDir, CAIRN_INDEX_THREADS: threads, CAIRN_CACHE_SIGN_BITS_MB: String(20_000 / 2 ** 20) }));
        const { index } = backends;
        for (const ds of ['a', 'b', 'c']) await index.upsert(Array.from({ length: 300 }, (_, i) => chunk(i, ds)));
        for (const ds of ['a', 'b', 'c']) assert.equal((await index.vectorSearch(chunk(7, ds).vector!, { datasetIds: [ds] }, 3)).length, 3);
        const signBits = (await index.cacheSizes!()).find((c) => c.name === 'sign_bits');
        assert.deepEqual(signBits, { name: 'sign_bits', entries: 300, bytes: 17_100 });
      });
    }
  });
});
