import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Api } from './client.js';
import { upload } from './documents-helpers.js';
import { adminKeyOf, cairnEnv, runCairn, startCairnProcess, type CairnProcess } from './cairn-process.js';

interface Made {
  datasets: { id: string; name: string }[];
  documents: { datasetId: string; id: string; text: string }[];
  chunks: { datasetId: string; documentId: string; id: string; content: string }[];
  chats: { id: string; name: string }[];
  sessions: { chatId: string; id: string; name: string }[];
}

/** One of everything, each step through the HTTP API as a client would. */
async function createRound(api: Api, made: Made, round: number, options: { deleteDocument?: boolean } = {}): Promise<void> {
  const ok = <T extends { status: number; body: any }>(res: T, what: string): T => {
    assert.equal(res.status, 200, `${what}: ${JSON.stringify(res.body)}`);
    return res;
  };
  const name = `load-${round}`;
  const ds = ok(await api.post('/datasets', { name }), 'create dataset').body.data;
  made.datasets.push({ id: ds.id, name });
  const text = `Round ${round}: the basalt cairn ${round} marks the ridge path. `.repeat(20);
  const doc = ok(await upload(api, ds.id, [{ name: `doc-${round}.txt`, bytes: Buffer.from(text) }]), 'upload').body.data[0];
  const content = `Chunk of round ${round}: granite cairns guide walkers in fog.`;
  const chunk = ok(await api.post(`/datasets/${ds.id}/documents/${doc.id}/chunks`, { content }), 'add chunk').body.data.chunk;
  // Created while its dataset holds a chunk: a chat refuses a dataset with nothing parsed.
  const chat = ok(await api.post('/chats', { name: `chat-${round}`, dataset_ids: [ds.id] }), 'create chat').body.data;
  if (options.deleteDocument) {
    // Files deleted while the backup runs: the backup must neither fail nor keep them.
    ok(await api.delete(`/datasets/${ds.id}/documents`, { ids: [doc.id] }), 'delete document');
  } else {
    made.documents.push({ datasetId: ds.id, id: doc.id, text });
    made.chunks.push({ datasetId: ds.id, documentId: doc.id, id: chunk.id, content });
  }
  made.chats.push({ id: chat.id, name: `chat-${round}` });
  const session = ok(await api.post(`/chats/${chat.id}/sessions`, { name: `session-${round}` }), 'create session').body.data;
  made.sessions.push({ chatId: chat.id, id: session.id, name: `session-${round}` });
}

const copy = (made: Made): Made => JSON.parse(JSON.stringify(made));

describe('cairn backup and restore', function () {
  this.timeout(900_000);
  const dirs: string[] = [];
  const running: CairnProcess[] = [];
  const tempDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-backup-'));
    dirs.push(dir);
    return dir;
  };

  let source: string;
  let backupDir: string;
  let restoredDir: string;
  let existedBefore: Made;
  let restored: CairnProcess;
  let loadRounds = 0;

  before(async () => {
    source = tempDir();
    backupDir = path.join(tempDir(), 'backup');
    restoredDir = tempDir();
    const cairn = await startCairnProcess(source);
    running.push(cairn);
    const api = new Api(cairn.url, adminKeyOf(source));
    const made: Made = { datasets: [], documents: [], chunks: [], chats: [], sessions: [] };
    for (let round = 0; round < 3; round++) await createRound(api, made, round);

    let backupRunning = true;
    let loadError: unknown;
    const load = (async () => {
      for (let round = 1000; backupRunning; round++) {
        // Every other round deletes its document again at once: deletions race the backup's copy too.
        await createRound(api, made, round, { deleteDocument: round % 2 === 0 });
        loadRounds++;
      }
    })().catch((err) => (loadError = err));
    // Let the load get going, then take the set that must survive: what was answered before the backup starts.
    while (loadRounds < 2) await new Promise((r) => setTimeout(r, 50));
    existedBefore = copy(made);
    const backup = await runCairn(['backup', backupDir], cairnEnv(source));
    backupRunning = false;
    await load;
    assert.equal(loadError, undefined, String(loadError));
    assert.equal(backup.code, 0, backup.stdout + backup.stderr);
    assert.match(backup.stdout, /backup complete/);
    await cairn.stop();

    const restore = await runCairn(['restore', backupDir], cairnEnv(restoredDir));
    assert.equal(restore.code, 0, restore.stdout + restore.stderr);
    restored = await startCairnProcess(restoredDir);
    running.push(restored);
  });

  after(async () => {
    for (const cairn of running) await cairn.stop();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('ran while writes went on (the load made rounds during the backup)', () => {
    assert.ok(loadRounds > 2, `only ${loadRounds} rounds of writes`);
  });

  it('writes a manifest with the time and the counts of what it captured', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(backupDir, 'manifest.json'), 'utf8'));
    assert.equal(manifest.format, 'cairn-backup/1');
    for (const key of ['started_at', 'snapshot_at', 'finished_at']) assert.ok(!Number.isNaN(Date.parse(manifest[key])), key);
    assert.ok(manifest.counts.datasets >= existedBefore.datasets.length);
    assert.ok(manifest.counts.documents >= existedBefore.documents.length);
    assert.ok(manifest.counts.chunk_rows >= existedBefore.chunks.length);
    assert.ok(manifest.counts.chat_sessions >= existedBefore.sessions.length);
    assert.deepEqual(Object.keys(manifest.databases).sort(), ['cairn.db', 'temporal.db']);
    assert.deepEqual(manifest.secrets.sort(), ['admin-api-key', 'jwt-secret']);
    // Only a file deleted while the backup ran can be missing, never one of a document that lived on.
    const kept = new Set(existedBefore.documents.map((d) => `datasets/${d.datasetId}/documents/${d.id}`));
    assert.deepEqual(manifest.blobs.missing.filter((key: string) => kept.has(key)), []);
  });

  it('restores sound databases: integrity_check is ok for cairn.db and temporal.db', () => {
    for (const name of ['cairn.db', 'temporal.db']) {
      const db = new BetterSqlite3(path.join(restoredDir, name), { readonly: true });
      try {
        assert.equal(db.pragma('integrity_check', { simple: true }), 'ok', name);
      } finally {
        db.close();
      }
    }
  });

  it('restores every dataset, document with its file, chunk, chat and session that existed when the backup began', async () => {
    const api = new Api(restored.url, adminKeyOf(restoredDir));
    assert.equal(adminKeyOf(restoredDir), adminKeyOf(backupDir), 'the admin key came back with the secrets');
    for (const ds of existedBefore.datasets) {
      const res = await api.get('/datasets', { id: ds.id });
      assert.equal(res.body.data?.[0]?.name, ds.name, `dataset ${ds.name}: ${JSON.stringify(res.body)}`);
    }
    for (const doc of existedBefore.documents) {
      const file = await api.get(`/datasets/${doc.datasetId}/documents/${doc.id}`);
      assert.equal(file.status, 200, `document ${doc.id}`);
      assert.equal(file.body, doc.text, `the file of document ${doc.id}`);
    }
    for (const chunk of existedBefore.chunks) {
      const res = await api.get(`/datasets/${chunk.datasetId}/documents/${chunk.documentId}/chunks`, { id: chunk.id });
      assert.equal(res.body.data?.chunks?.[0]?.content, chunk.content, `chunk ${chunk.id}: ${JSON.stringify(res.body)}`);
    }
    const hits = await api.post('/retrieval', { question: 'granite cairns fog', dataset_ids: [existedBefore.datasets[0]!.id] });
    assert.ok(hits.body.data.chunks.some((c: any) => c.id === existedBefore.chunks[0]!.id), 'the restored chunk index answers searches');
    for (const chat of existedBefore.chats) {
      const res = await api.get(`/chats/${chat.id}`);
      assert.equal(res.body.data?.name, chat.name, `chat ${chat.name}`);
    }
    for (const session of existedBefore.sessions) {
      const res = await api.get(`/chats/${session.chatId}/sessions/${session.id}`);
      assert.equal(res.body.data?.name, session.name, `session ${session.name}`);
    }
  });

  it('keeps no files of documents the captured database does not know', () => {
    const db = new BetterSqlite3(path.join(restoredDir, 'cairn.db'), { readonly: true });
    const known = new Set((db.prepare('SELECT location FROM documents').all() as { location: string }[]).map((r) => r.location));
    db.close();
    const datasetsDir = path.join(restoredDir, 'blobs', 'datasets');
    for (const ds of fs.readdirSync(datasetsDir)) {
      const docsDir = path.join(datasetsDir, ds, 'documents');
      if (!fs.existsSync(docsDir)) continue;
      for (const file of fs.readdirSync(docsDir)) assert.ok(known.has(`datasets/${ds}/documents/${file}`), `stray file datasets/${ds}/documents/${file}`);
    }
  });

  it('restore refuses a data dir that Cairn is running on, naming it, and changes nothing', async () => {
    const before = fs.statSync(path.join(restoredDir, 'cairn.db')).ino;
    const res = await runCairn(['restore', backupDir, '--force'], cairnEnv(restoredDir));
    assert.equal(res.code, 1);
    assert.match(res.stderr, new RegExp(`Cairn is already running with data dir ${restoredDir} \\(pid ${restored.child.pid}\\); stop it before restoring`));
    assert.equal(fs.statSync(path.join(restoredDir, 'cairn.db')).ino, before);
  });

  it('restore refuses a non-empty data dir without --force and explains; with --force it replaces it', async () => {
    const refused = await runCairn(['restore', backupDir], cairnEnv(source));
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /is not empty .*pass --force/);
    const forced = await runCairn(['restore', backupDir, '--force'], cairnEnv(source));
    assert.equal(forced.code, 0, forced.stderr);
    const db = new BetterSqlite3(path.join(source, 'cairn.db'), { readonly: true });
    const documents = (db.prepare('SELECT count(*) AS n FROM documents').get() as { n: number }).n;
    db.close();
    assert.equal(documents, JSON.parse(fs.readFileSync(path.join(backupDir, 'manifest.json'), 'utf8')).counts.documents);
    assert.ok(!fs.existsSync(path.join(source, 'cairn.db-wal')), 'no stale write-ahead log beside the restored database');
  });

  it('backup refuses a directory that is not empty, and restore refuses a directory without a manifest', async () => {
    const backup = await runCairn(['backup', backupDir], cairnEnv(source));
    assert.equal(backup.code, 1);
    assert.match(backup.stderr, /is not empty/);
    const partial = tempDir();
    fs.copyFileSync(path.join(backupDir, 'cairn.db'), path.join(partial, 'cairn.db'));
    const restore = await runCairn(['restore', partial], cairnEnv(tempDir()));
    assert.equal(restore.code, 1);
    assert.match(restore.stderr, /not a complete Cairn backup: manifest\.json is missing/);
  });
});
