import { sql, type Kysely } from 'kysely';
import type { MetaDb } from '../../store/db.js';

/**
 * The metadata tables in dependency order (a row's foreign keys point to tables earlier in the list),
 * each with its primary key: batches are read in key order and written as upserts on it.
 */
export const COPIED_TABLES: { table: string; key: string[] }[] = [
  { table: 'users', key: ['id'] },
  { table: 'tenant_members', key: ['tenant_id', 'user_id'] },
  { table: 'api_keys', key: ['id'] },
  { table: 'provider_instances', key: ['id'] },
  { table: 'provider_models', key: ['id'] },
  { table: 'tenant_defaults', key: ['tenant_id'] },
  { table: 'datasets', key: ['id'] },
  { table: 'documents', key: ['id'] },
  { table: 'ingestion_steps', key: ['document_id', 'run_seq', 'step_index'] },
  { table: 'chats', key: ['id'] },
  { table: 'chat_datasets', key: ['chat_id', 'dataset_id'] },
  { table: 'chat_sessions', key: ['id'] },
  { table: 'agents', key: ['id'] },
  { table: 'agent_versions', key: ['id'] },
  { table: 'agent_sessions', key: ['id'] },
  { table: 'agent_runs', key: ['id'] },
  { table: 'agent_run_steps', key: ['run_id', 'step_index'] },
  { table: 'agent_schedules', key: ['id'] },
  { table: 'agent_trigger_calls', key: ['id'] },
  { table: 'agent_attachments', key: ['id'] },
  { table: 'memories', key: ['id'] },
  { table: 'memory_tasks', key: ['memory_id', 'message_id'] },
  { table: 'mcp_servers', key: ['id'] },
  { table: 'search_apps', key: ['id'] },
  { table: 'settings', key: ['key'] },
  { table: 'enrichment_cache', key: ['key'] },
  { table: 'dataset_tasks', key: ['dataset_id', 'type'] },
  { table: 'knowledge_graphs', key: ['dataset_id'] },
  { table: 'graph_extractions', key: ['build_id', 'unit_key'] },
  { table: 'graph_entities', key: ['build_id', 'id'] },
  { table: 'graph_relations', key: ['build_id', 'source_id', 'target_id'] },
  { table: 'graph_communities', key: ['build_id', 'id'] },
];

/**
 * Metadata tables deliberately left behind: the migrator's own bookkeeping (the target is migrated by
 * the same code), and run_events, the event logs of agent runs on their way to a caller's stream; they
 * belong to Temporal runs, which are not migrated, and are purged an hour after the run ended anyway.
 * The memory_message* tables are the Milvus memory index's ledger (src/store/milvus-memory-ledger.ts):
 * empty in an embedded source (its memories live in the index file), and filled in the target by the
 * messages stage through MemoryIndex.importMessages, not copied as tables. agent_webhook_rates holds the
 * webhooks' rate buckets: a bucket left behind starts full, as it would after a window's wait.
 */
const LEFT_BEHIND = new Set([
  'kysely_migration', 'kysely_migration_lock', 'run_events', 'agent_webhook_rates',
  'memory_messages', 'memory_message_totals', 'memory_message_guards', 'memory_message_sequence', 'memory_message_sync',
]);

/** Rows per read and per insert: far below PostgreSQL's 65,535 parameters per statement (documents have 26 columns). */
const BATCH = 200;

type AnyDb = Kysely<any>;

/**
 * Every table of the migrated target database must be copied or deliberately left behind: a table a
 * later migration adds fails the migration here until this list knows it, instead of being dropped.
 */
export async function assertEveryTableKnown(target: MetaDb): Promise<void> {
  // Cairn's migrations create their tables in the connection's current schema; other schemas are not Cairn's.
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(target.kysely);
  const tables = (await target.kysely.introspection.getTables()).filter((t) => t.schema === rows[0]?.schema).map((t) => t.name);
  const known = new Set(COPIED_TABLES.map((t) => t.table));
  const unknown = tables.filter((name) => !known.has(name) && !LEFT_BEHIND.has(name));
  if (unknown.length) throw new Error(`cairn migrate-to does not know the metadata table(s) ${unknown.join(', ')}; add them to src/cli/migration/tables.ts`);
}

/** Rows per copied table. */
export async function countRows(db: MetaDb): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const { table } of COPIED_TABLES) {
    const row = await (db.kysely as AnyDb).selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    counts[table] = Number(row.n);
  }
  return counts;
}

/**
 * Copies one table in key order, BATCH rows at a time. Rows already in the target (a rerun) are
 * overwritten with the source's values, so a rerun converges on the source instead of failing.
 */
export async function copyTable(source: MetaDb, target: MetaDb, spec: { table: string; key: string[] }): Promise<number> {
  const from = source.kysely as AnyDb;
  const to = target.kysely as AnyDb;
  let copied = 0;
  let last: Record<string, unknown> | undefined;
  for (;;) {
    let query = spec.key.reduce((q, k) => q.orderBy(k), from.selectFrom(spec.table).selectAll()).limit(BATCH);
    if (last) {
      const after = last;
      // Keyset paging with a row value: (a, b) > (x, y), valid in SQLite and PostgreSQL.
      query = query.where(sql<boolean>`(${sql.join(spec.key.map((k) => sql.ref(k)))}) > (${sql.join(spec.key.map((k) => after[k]))})`);
    }
    const rows = (await query.execute()) as Record<string, unknown>[];
    if (rows.length === 0) return copied;
    await upsert(to, spec, rows);
    copied += rows.length;
    last = rows.at(-1);
  }
}

async function upsert(db: AnyDb, spec: { table: string; key: string[] }, rows: Record<string, unknown>[]): Promise<void> {
  const write = (batch: Record<string, unknown>[]) => {
    const columns = Object.keys(batch[0]!).filter((c) => !spec.key.includes(c));
    return db
      .insertInto(spec.table)
      .values(batch)
      .onConflict((oc) => {
        const conflict = oc.columns(spec.key as never[]);
        return columns.length ? conflict.doUpdateSet(Object.fromEntries(columns.map((c) => [c, (eb: any) => eb.ref(`excluded.${c}`)]))) : conflict.doNothing();
      })
      .execute();
  };
  try {
    await write(rows);
  } catch (err) {
    // Find the row the database refuses (e.g. text with a NUL character, which PostgreSQL does not store) to name it.
    for (const row of rows) {
      try {
        await write([row]);
      } catch (rowErr) {
        const key = spec.key.map((k) => `${k}=${String(row[k])}`).join(', ');
        throw new Error(`copying ${spec.table} failed at the row ${key}: ${(rowErr as Error).message}`);
      }
    }
    throw err;
  }
}
