import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { loadConfig } from '../../../src/config.js';
import { newId } from '../../../src/ids.js';
import { parseFlags } from '../../../src/cli/migrate-to.js';
import { COPIED_TABLES, assertEveryTableKnown, copyTable, countRows } from '../../../src/cli/migration/tables.js';
import { inspectTarget, writeMarker } from '../../../src/cli/migration/target-state.js';
import { runsInProgress } from '../../../src/cli/migration/in-progress.js';
import { sharedPostgres } from '../../support/postgres.js';

const spec = (table: string) => COPIED_TABLES.find((t) => t.table === table)!;
const now = Date.now();

function memoryRow(id: string) {
  return {
    id, tenant_id: 't', created_by: 't', name: `m-${id}`, name_key: `m-${id}`, avatar: null, description: null, memory_type: 1, storage_type: 'table',
    embd_id: 'e', llm_id: 'l', permission: 'me' as const, memory_size: 1000, forgetting_policy: 'FIFO', temperature: 0.5, system_prompt: '', user_prompt: '',
    create_time: now, update_time: now,
  };
}

describe('cairn migrate-to: arguments', () => {
  it('takes the four target settings as --flag value or --flag=value', () => {
    assert.deepEqual(parseFlags(['--database-url', 'postgres://u:p@h/db', '--blobs=s3://b/p', '--index', 'embedded', '--data-dir=/t']), {
      databaseUrl: 'postgres://u:p@h/db', blobs: 's3://b/p', index: 'embedded', dataDir: '/t',
    });
  });

  it('names what is missing, unknown, repeated or without a value', () => {
    assert.throws(() => parseFlags(['--index', 'embedded']), /missing --database-url, --blobs, --data-dir/);
    assert.throws(() => parseFlags(['--force']), /unknown argument: --force/);
    assert.throws(() => parseFlags(['--index', 'embedded', '--index=embedded']), /--index is given twice/);
    assert.throws(() => parseFlags(['--blobs', '--index', 'embedded']), /--blobs needs a value/);
  });
});

describe('cairn migrate-to: metadata from SQLite to PostgreSQL', function () {
  this.timeout(60_000);
  let source: MetaDb;
  let target: MetaDb;

  beforeEach(async () => {
    source = await openDatabase(':memory:');
    target = await openDatabase(await (await sharedPostgres()).createDatabase('cairn_migrate_unit'));
  });
  afterEach(async () => {
    await source.close();
    await target.close();
  });

  it('copies a table with a two-column key in batches (keyset paging), every row once, values unchanged', async () => {
    await source.kysely.insertInto('memories').values(memoryRow('m1')).execute();
    const tasks = Array.from({ length: 450 }, (_, i) => ({ memory_id: 'm1', message_id: 3_000_000_000 + i, progress: i / 450, progress_msg: `step ${i}`, create_time: now, update_time: now + i }));
    for (let i = 0; i < tasks.length; i += 100) await source.kysely.insertInto('memory_tasks').values(tasks.slice(i, i + 100)).execute();
    assert.equal(await copyTable(source, target, spec('memories')), 1);
    assert.equal(await copyTable(source, target, spec('memory_tasks')), 450);
    const copied = await target.kysely.selectFrom('memory_tasks').selectAll().orderBy('message_id').execute();
    assert.deepEqual(copied, tasks);
  });

  it('a rerun overwrites what an earlier run copied with the source\'s current values and adds nothing', async () => {
    await source.kysely.insertInto('memories').values([memoryRow('m1'), memoryRow('m2')]).execute();
    await copyTable(source, target, spec('memories'));
    await source.kysely.updateTable('memories').set({ description: 'changed' }).where('id', '=', 'm2').execute();
    assert.equal(await copyTable(source, target, spec('memories')), 2);
    assert.deepEqual(await target.kysely.selectFrom('memories').select(['id', 'description']).orderBy('id').execute(), [
      { id: 'm1', description: null },
      { id: 'm2', description: 'changed' },
    ]);
  });

  it('names the row PostgreSQL refuses (text with a NUL character)', async () => {
    await source.kysely.insertInto('memories').values([memoryRow('m1'), { ...memoryRow('m2'), description: 'bad\u0000text' }]).execute();
    await assert.rejects(copyTable(source, target, spec('memories')), /copying memories failed at the row id=m2: .*0x00/);
  });

  it('knows every table of the migrated schema, and refuses one it does not know', async () => {
    await assertEveryTableKnown(target);
    await sql`create table later_feature (id text primary key)`.execute(target.kysely);
    await assert.rejects(assertEveryTableKnown(target), /does not know the metadata table\(s\) later_feature/);
  });

  it('an empty target is fresh; once marked, the same source resumes it until it is finished; anything else is refused', async () => {
    assert.equal(await inspectTarget(target, '/data/a'), 'fresh');
    await writeMarker(target, '/data/a', false);
    assert.equal(await inspectTarget(target, '/data/a'), 'resume');
    await assert.rejects(inspectTarget(target, '/data/b'), /not empty: it holds a migration of \/data\/a \(settings 1\)/);
    await writeMarker(target, '/data/a', true);
    await assert.rejects(inspectTarget(target, '/data/a'), /already holds a finished migration of \/data\/a/);
    assert.equal((await countRows(target)).settings, 1);
  });

  it('a database another Cairn has used is refused, naming what it holds', async () => {
    await target.kysely.insertInto('memories').values(memoryRow('m1')).execute();
    await assert.rejects(inspectTarget(target, '/data/a'), /not empty: it holds another Cairn installation \(memories 1\); migrate into a new, empty database/);
  });
});

describe('cairn migrate-to: runs in progress', () => {
  it('a document left RUNNING is work in progress, even with no Temporal state to ask', async () => {
    const db = await openDatabase(':memory:');
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-migrate-unit-'));
    try {
      const store = new MetaStore(db);
      const document = {
        id: newId(), dataset_id: 'd1', tenant_id: 't', name: 'moor.txt', location: 'x', size: 1, type: 'doc', suffix: 'txt', chunk_method: 'naive',
        parser_config: '{}', source_type: 'local', created_by: 't', progress: 0.5, progress_msg: '', process_begin_at: now, process_duration: 0,
        chunk_count: 0, token_count: 0, meta_fields: '{}', run_seq: 1, create_time: now, update_time: now,
      };
      await store.documents.insert({ ...document, run: 'DONE' });
      const config = loadConfig({ CAIRN_DATA_DIR: dataDir });
      assert.deepEqual(await runsInProgress(config, store, () => undefined), []);
      await store.documents.insert({ ...document, id: newId(), run: 'RUNNING' });
      const busy = await runsInProgress(config, store, () => undefined);
      assert.equal(busy.length, 1);
      assert.match(busy[0]!, /document [0-9a-f]{32} \(moor\.txt\) of dataset d1 is being parsed \(RUNNING\)/);
    } finally {
      await db.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
