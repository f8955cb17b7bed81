import assert from 'node:assert/strict';
import { MilvusClient } from '@zilliz/milvus2-sdk-node';
import type { MilvusLocation } from '../../../../../src/index/location.js';
import { ANALYSIS_PROPERTY, ANALYSIS_VERSION } from '../../../../../src/index/chunks/milvus/analysis.js';
import { MilvusMemoryIndex } from '../../../../../src/index/memories/milvus-memory-index.js';
import { MilvusChunkIndex } from '../../../../../src/index/chunks/milvus/milvus-index.js';
import type { ProgressLog } from '../../../../../src/index/chunks/milvus/reanalysis.js';
import { CHUNK_ROW_FIELDS } from '../../../../../src/index/chunks/milvus/rows.js';
import type { MetaDb } from '../../../../../src/store/db.js';
import { sharedMilvus } from '../../../../support/milvus-server.js';
import { openTestMetaDb } from '../../../../support/meta-store.js';
import { chunk } from '../../helpers.js';
import { msg, opts } from '../../memories/memory-index-conformance.js';

/**
 * What the tokenizer before 2026-11-24 (analysis version 1) wrote for Greek and Hangul words: their
 * combining marks stripped after NFD, so "ά" became "α" and Hangul syllables became jamo.
 */
const oldAnalysis = (text: string) => text.normalize('NFD').replace(/\p{M}+/gu, '');

/** A text no analysis writes: an ASCII row that still has it after the re-analysis was not rewritten. */
const MARKER = 'untouched marker';

const INT64_FIELDS = new Set(['dim', 'ordinal', 'record_parts', 'message_id']);

describe('Milvus: text analysed by an older analysis is re-analysed when the index opens (milvus-lite)', function () {
  this.timeout(120_000);
  let client: MilvusClient;
  const messages: string[] = [];
  const log: ProgressLog = { info: (_fields, message) => messages.push(message), warn: (fields, message) => messages.push(`${message} ${JSON.stringify(fields)}`) };

  before(async () => {
    const server = await sharedMilvus();
    client = new MilvusClient({ address: server.address, telemetry: { enabled: false }, logLevel: 'error' });
  });

  after(async () => {
    await client?.closeConnection();
  });

  const use = (location: MilvusLocation) => client.useDatabase({ db_name: location.database });

  /** The row's stored fields, as Milvus answers them. */
  async function storedRow(collection: string, filter: string, fields: string[]): Promise<Record<string, unknown>> {
    const { data } = await client.query({ collection_name: collection, filter, output_fields: fields, limit: 1 });
    assert.equal(data.length, 1, `one row for ${filter}`);
    return data[0]!;
  }

  /** Replaces the row's `text` (every other field as stored), as an older Cairn would have written it. */
  async function writeText(collection: string, filter: string, fields: string[], text: (stored: string) => string): Promise<void> {
    const row = await storedRow(collection, filter, fields);
    const written = Object.fromEntries(Object.entries(row).map(([k, v]) => [k, INT64_FIELDS.has(k) ? Number(v) : v]));
    const { status } = await client.upsert({ collection_name: collection, data: [{ ...written, text: text(String(row.text)) }] });
    assert.equal(status.error_code, 'Success', status.reason);
  }

  const version = async (collection: string) =>
    (await client.describeCollection({ collection_name: collection })).properties.find((p) => p.key === ANALYSIS_PROPERTY)?.value;

  it('chunks: Greek and Hangul rows get the current analysis, ASCII rows are left alone, and the version is stored', async () => {
    const location = (await sharedMilvus()).freshLocation();
    const first = await MilvusChunkIndex.connect(location, { log });
    const f = { datasetIds: ['ds1'] };
    try {
      await first.upsert([
        chunk({ id: 'greek', content: 'Η ακτινοβολία άλφα' }),
        chunk({ id: 'greek-done', content: 'σωματίδια άλφα' }),
        chunk({ id: 'hangul', content: '한국어 문장', questions: ['무엇입니까'] }),
        chunk({ id: 'ascii', content: 'plain alpha text' }),
      ]);
      await use(location);
      assert.equal(await version('cairn_chunks'), String(ANALYSIS_VERSION), 'a new collection has the current version');
      const fields = CHUNK_ROW_FIELDS as string[];
      for (const id of ['greek', 'hangul']) {
        await writeText('cairn_chunks', `id == "${id}"`, fields, (text) => {
          assert.notEqual(oldAnalysis(text), text, 'the old analysis differs');
          return oldAnalysis(text);
        });
      }
      await writeText('cairn_chunks', 'id == "ascii"', fields, () => MARKER);
      // A collection made before versions were kept; 'greek-done' stands for a row rewritten before a crash.
      await client.dropCollectionProperties({ collection_name: 'cairn_chunks', properties: [ANALYSIS_PROPERTY] });
      assert.equal(await version('cairn_chunks'), undefined);
      assert.deepEqual((await first.fullText('άλφα', f, 5)).map((h) => h.id), ['greek-done'], 'the old row is missed');
    } finally {
      await first.close();
    }

    const reopened = await MilvusChunkIndex.connect(location, { log });
    try {
      await reopened.reanalysed();
      assert.deepEqual((await reopened.fullText('άλφα', f, 5)).map((h) => h.id).sort(), ['greek', 'greek-done']);
      assert.deepEqual((await reopened.fullText('한국어', f, 5)).map((h) => h.id), ['hangul']);
      assert.deepEqual((await reopened.fullText('무엇입니까', f, 5)).map((h) => h.id), ['hangul']);
      await use(location);
      assert.equal((await storedRow('cairn_chunks', 'id == "ascii"', ['text'])).text, MARKER, 'the ASCII row was not rewritten');
      assert.equal(await version('cairn_chunks'), String(ANALYSIS_VERSION));
      assert.equal((await reopened.get('greek'))?.content, 'Η ακτινοβολία άλφα', 'the record is unchanged');
      assert.ok(messages.some((m) => m.includes('re-analysis done')), messages.join('\n'));
    } finally {
      await reopened.close();
    }
  });

  it('memory messages: search copies of Greek and Hangul messages are written again, ASCII ones are left alone', async () => {
    const location = (await sharedMilvus()).freshLocation();
    const db: MetaDb = await openTestMetaDb('embedded');
    const filter = { memoryIds: ['m1'] };
    try {
      const first = await MilvusMemoryIndex.connect(location, db, { log });
      let ids: number[];
      try {
        ({ messageIds: ids } = await first.add('m1', [msg({ content: 'άλφα σωματίδια' }), msg({ content: '한국어 문장' }), msg({ content: 'plain text' })], opts()));
        await use(location);
        const fields = ['message_id', 'memory_id', 'agent_id', 'session_id', 'user_id', 'searchable', 'text'];
        for (const id of ids.slice(0, 2)) await writeText('cairn_memory_messages', `message_id == ${id}`, fields, oldAnalysis);
        await writeText('cairn_memory_messages', `message_id == ${ids[2]}`, fields, () => MARKER);
        await client.alterCollectionProperties({ collection_name: 'cairn_memory_messages', properties: { [ANALYSIS_PROPERTY]: '1' } });
        assert.deepEqual(await first.fullText('άλφα', filter, 5), [], 'the old copy is missed');
      } finally {
        await first.close();
      }

      const reopened = await MilvusMemoryIndex.connect(location, db, { log });
      try {
        await reopened.reanalysed();
        assert.deepEqual((await reopened.fullText('άλφα', filter, 5)).map((h) => h.message_id), [ids[0]]);
        assert.deepEqual((await reopened.fullText('한국어', filter, 5)).map((h) => h.message_id), [ids[1]]);
        await use(location);
        assert.equal((await storedRow('cairn_memory_messages', `message_id == ${ids[2]}`, ['text'])).text, MARKER, 'the ASCII copy was not rewritten');
        assert.equal(await version('cairn_memory_messages'), String(ANALYSIS_VERSION));
      } finally {
        await reopened.close();
      }
    } finally {
      await db.close();
    }
  });
});
