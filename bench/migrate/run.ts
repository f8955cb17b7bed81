/**
 * `cairn migrate-to` benchmark (prints numbers; not a timed test).
 *
 *   npx tsx bench/migrate/run.ts [--documents 100] [--chunks 100] [--file-kb 50] [--messages 2000] [--sessions 200]
 *
 * Seeds an embedded installation directly through its backends (documents with a file each and
 * `chunks` chunks of 384-dimension embeddings each, chat sessions, one memory with `messages` messages),
 * then runs `cairn migrate-to` as operators do, into a fresh PostgreSQL cluster, moto's S3 on loopback
 * and an embedded index in a new data dir, and prints the command's own per-stage lines.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { argument } from '../common.js';
import { loadConfig } from '../../src/config.js';
import { openBackends } from '../../src/wiring.js';
import { newId } from '../../src/ids.js';
import { startDevServer } from '../../src/engine/dev-server.js';
import type { IndexedChunk } from '../../src/index/chunks/chunk-index.js';
import { startPostgres } from '../../test/support/postgres.js';
import { startS3Server } from '../../test/support/s3-server.js';

const documents = Number(argument('documents', '100'));
const chunksPerDocument = Number(argument('chunks', '100'));
const fileKb = Number(argument('file-kb', '50'));
const messages = Number(argument('messages', '2000'));
const sessions = Number(argument('sessions', '200'));
const DIMS = 384;

function unitVector(dims: number): number[] {
  const v = Array.from({ length: dims }, () => Math.random() - 0.5);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

async function seed(dataDir: string): Promise<void> {
  fs.mkdirSync(dataDir, { recursive: true });
  const backends = await openBackends(loadConfig({ CAIRN_DATA_DIR: dataDir, CAIRN_INDEX_THREADS: '0' }));
  try {
    const db = backends.db.kysely;
    const now = Date.now();
    const tenant = newId();
    await db.insertInto('users').values({ id: tenant, email: 'bench@example.com', nickname: 'bench', password_hash: 'x', is_admin: 0, create_time: now, update_time: now }).execute();
    const datasetId = newId();
    await db.insertInto('datasets').values({
      id: datasetId, tenant_id: tenant, created_by: tenant, name: 'bench', name_key: 'bench', avatar: null, description: null, embedding_model: 'e@Builtin',
      permission: 'me', chunk_method: 'naive', parser_config: '{}', pagerank: 0, language: 'English', status: 'active', create_time: now, update_time: now,
    }).execute();
    for (let d = 0; d < documents; d++) {
      const id = newId();
      const location = `datasets/${datasetId}/documents/${id}`;
      await backends.blobs.put(location, crypto.randomBytes(fileKb * 1024));
      await db.insertInto('documents').values({
        id, dataset_id: datasetId, tenant_id: tenant, name: `doc-${d}.txt`, location, size: fileKb * 1024, type: 'doc', suffix: 'txt', chunk_method: 'naive',
        parser_config: '{}', source_type: 'local', created_by: tenant, run: 'DONE', progress: 1, progress_msg: '', process_begin_at: now, process_duration: 1,
        chunk_count: chunksPerDocument, token_count: 0, meta_fields: '{}', run_seq: 1, create_time: now, update_time: now,
      }).execute();
      const chunks: IndexedChunk[] = Array.from({ length: chunksPerDocument }, (_, c) => ({
        id: newId(), tenant_id: tenant, dataset_id: datasetId, document_id: id, document_name: `doc-${d}.txt`,
        content: `Chunk ${c} of document ${d}: granite cairns mark the trail across the moor, number ${crypto.randomBytes(6).toString('hex')}.`,
        important_keywords: [], questions: [], tag_kwd: [], image_id: '', positions: [], available: true,
        create_time: '2024-01-01 00:00:00', create_timestamp: now / 1000, vector: unitVector(DIMS),
      }));
      await backends.index.upsert(chunks);
    }
    const chatId = newId();
    await db.insertInto('chats').values({
      id: chatId, tenant_id: tenant, created_by: tenant, name: 'bench', description: '', icon: '', llm_id: null, llm_setting: '{}', prompt_config: '{}',
      similarity_threshold: 0.2, vector_similarity_weight: 0.3, top_n: 6, top_k: 1024, rerank_id: '', create_time: now, update_time: now,
    }).execute();
    const history = JSON.stringify(Array.from({ length: 20 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: 'A turn of a conversation about cairns. '.repeat(10) })));
    for (let s = 0; s < sessions; s++) {
      await db.insertInto('chat_sessions').values({ id: newId(), chat_id: chatId, name: `s${s}`, user_id: '', messages: history, create_time: now, update_time: now }).execute();
    }
    const memoryId = newId();
    await db.insertInto('memories').values({
      id: memoryId, tenant_id: tenant, created_by: tenant, name: 'bench', name_key: 'bench', avatar: null, description: null, memory_type: 1, storage_type: 'table',
      embd_id: 'e', llm_id: 'l', permission: 'me', memory_size: 10 * 1024 * 1024, forgetting_policy: 'FIFO', temperature: 0.5, system_prompt: '', user_prompt: '',
      create_time: now, update_time: now,
    }).execute();
    for (let m = 0; m < messages; m += 100) {
      const batch = Array.from({ length: Math.min(100, messages - m) }, (_, i) => ({
        message_type: 'raw' as const, source_id: 0, user_id: 'u', agent_id: 'a', session_id: 's', content: `Message ${m + i}: the upper bridge is open.`,
        vector: unitVector(64), valid_at: now + m + i,
      }));
      await backends.memories.add(memoryId, batch, { limit: 10 * 1024 * 1024, tenantId: tenant });
    }
  } finally {
    await backends.close();
  }
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-migrate-'));
const source = path.join(root, 'source');
const target = path.join(root, 'target');
const pg = await startPostgres();
const s3 = await startS3Server();
try {
  await s3.createBucket('bench');
  const seeded = Date.now();
  await seed(source);
  // A Temporal dev server's database, as `cairn start` leaves one: migrate-to checks it for open workflows.
  await (await startDevServer({ rootDir: path.resolve('.'), dbFile: path.join(source, 'temporal.db'), port: 0 })).stop();
  console.log(`seeded ${documents} documents × ${chunksPerDocument} chunks (${DIMS} dims), ${documents} files of ${fileKb} kB, ${sessions} chat sessions, ${messages} memory messages in ${((Date.now() - seeded) / 1000).toFixed(1)} s`);
  const databaseUrl = await pg.createDatabase('cairn_bench');
  const env: NodeJS.ProcessEnv = { ...process.env, ...s3.env('bench', 'moved'), CAIRN_DATA_DIR: source, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
  delete env.CAIRN_BLOBS;
  const started = Date.now();
  const { stdout } = await promisify(execFile)(process.execPath, [path.resolve('bin/cairn.js'), 'migrate-to', '--database-url', databaseUrl, '--blobs', 's3://bench/moved', '--index', 'embedded', '--data-dir', target], { env, maxBuffer: 64 * 1024 * 1024 });
  for (const line of stdout.split('\n')) if (/ in \d|complete/.test(line)) console.log(`  ${line}`);
  console.log(`whole command (Node start-up included): ${((Date.now() - started) / 1000).toFixed(1)} s`);
} finally {
  await s3.stop();
  await pg.stop();
  fs.rmSync(root, { recursive: true, force: true });
}
