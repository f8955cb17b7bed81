import assert from 'node:assert/strict';
import { newUser, type Api } from './client.js';
import { upload, waitForRun } from './documents-helpers.js';
import { startFakes, type Fakes } from '../fakes/index.js';
import { useFakeProviders } from './providers-helpers.js';

describe('RAGFlow small behaviours (issue 15 item 6)', () => {
  let api: Api;
  let fakes: Fakes;
  let ds: string;

  before(async () => {
    api = (await newUser('behaviours')).api;
    fakes = await startFakes();
    await useFakeProviders(api, fakes);
    const res = await api.post('/datasets', { name: `behaviours-${Date.now().toString(36)}` });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    ds = res.body.data.id;
  });
  after(() => fakes.close());

  it('renaming a document renames it in its chunks and in retrieval results (document_name)', async () => {
    const doc = (await upload(api, ds, [{ name: 'old-name.txt', bytes: Buffer.from('x') }])).body.data[0];
    const added = await api.post(`/datasets/${ds}/documents/${doc.id}/chunks`, { content: 'Slate cairns guide walkers across the moor.' });
    assert.equal(added.status, 200, JSON.stringify(added.body));
    const renamed = await api.patch(`/datasets/${ds}/documents/${doc.id}`, { name: 'new-name.txt' });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));

    const list = await api.get(`/datasets/${ds}/documents/${doc.id}/chunks`);
    assert.equal(list.body.data.total, 1);
    for (const c of list.body.data.chunks) {
      assert.equal(c.document_name, 'new-name.txt');
      assert.equal(c.docnm_kwd, 'new-name.txt');
    }
    const hits = await api.post('/retrieval', { dataset_ids: [ds], document_ids: [doc.id], question: 'slate cairns moor', similarity_threshold: 0 });
    assert.equal(hits.status, 200, JSON.stringify(hits.body));
    assert.ok(hits.body.data.chunks.length > 0);
    assert.ok(hits.body.data.chunks.every((c: any) => c.document_name === 'new-name.txt'), JSON.stringify(hits.body.data.chunks));
    assert.ok(hits.body.data.doc_aggs.every((a: any) => a.doc_name === 'new-name.txt'));
    // The new name is searchable, the old one no longer matches by name.
    const byName = await api.post('/retrieval', { dataset_ids: [ds], document_ids: [doc.id], question: 'new-name', similarity_threshold: 0, vector_similarity_weight: 0 });
    assert.ok(byName.body.data.chunks.length > 0, JSON.stringify(byName.body));
  });

  it('a 0-byte upload is stored (not failing the batch) and parses to zero chunks, DONE', async () => {
    const plain = (await newUser('behaviours-empty')).api;
    const own = (await plain.post('/datasets', { name: 'empty-files' })).body.data.id;
    const res = await upload(plain, own, [
      { name: 'empty.txt', bytes: new Uint8Array() },
      { name: 'full.txt', bytes: Buffer.from('Cairns of basalt line the northern ridge.') },
    ]);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.code, 0);
    assert.deepEqual(res.body.data.map((d: any) => d.name), ['empty.txt', 'full.txt']);
    const empty = res.body.data[0];
    assert.equal(empty.size, 0);
    const parse = await plain.post(`/datasets/${own}/chunks`, { document_ids: [empty.id] });
    assert.equal(parse.status, 200, JSON.stringify(parse.body));
    const done = await waitForRun(plain, own, empty.id);
    assert.equal(done.run, 'DONE', done.progress_msg);
    assert.equal(done.chunk_count, 0);
    assert.equal((await plain.get(`/datasets/${own}/documents/${empty.id}/chunks`)).body.data.total, 0);
  });

  it('chunk content is kept as given (a leading newline stays) and blank questions are dropped', async () => {
    const doc = (await upload(api, ds, [{ name: 'verbatim.txt', bytes: Buffer.from('x') }])).body.data[0];
    const base = `/datasets/${ds}/documents/${doc.id}/chunks`;
    const content = '\nIndented first line\n  and a second one  ';
    const res = await api.post(base, { content, questions: ['  Where are the cairns? ', '', '   '] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.chunk.content, content);
    assert.deepEqual(res.body.data.chunk.questions, ['Where are the cairns?']);
    const id = res.body.data.chunk.id;
    const stored = await api.get(base, { id });
    assert.equal(stored.body.data.chunks[0].content, content);

    const next = '\n\nUpdated body';
    const upd = await api.patch(`${base}/${id}`, { content: next, questions: ['', 'Why?', ' '] });
    assert.equal(upd.status, 200, JSON.stringify(upd.body));
    const after = (await api.get(base, { id })).body.data.chunks[0];
    assert.equal(after.content, next);
    assert.deepEqual(after.questions, ['Why?']);
    assert.equal((await api.post(base, { content: ' \n ' })).status, 400, 'blank content is still refused');
  });

  it('a prompt_config without {knowledge} and without explicit parameters is accepted; the default knowledge parameter applies only when the system prompt uses it', async () => {
    const created = await api.post('/chats', { name: 'no-knowledge', prompt_config: { system: 'You are a terse assistant.' } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.data.prompt_config.system, 'You are a terse assistant.');
    assert.ok(!created.body.data.prompt_config.parameters.some((p: any) => p.key === 'knowledge'));
    const id = created.body.data.id;
    // Putting {knowledge} back brings the default parameter back.
    const back = await api.patch(`/chats/${id}`, { prompt_config: { system: 'Use this: {knowledge}' } });
    assert.equal(back.status, 200, JSON.stringify(back.body));
    assert.ok(back.body.data.prompt_config.parameters.some((p: any) => p.key === 'knowledge'));
    // Explicit parameters are still checked against the system prompt.
    const explicit = await api.post('/chats', { name: 'explicit', prompt_config: { system: 'No knowledge.', parameters: [{ key: 'knowledge', optional: false }] } });
    assert.equal(explicit.status, 400);
  });

  it('renaming a document to a case variant of a sibling\'s name is allowed (RAGFlow compares names exactly); the exact name is a duplicate', async () => {
    const docs = (await upload(api, ds, [
      { name: 'Report.txt', bytes: Buffer.from('a') },
      { name: 'other.txt', bytes: Buffer.from('b') },
    ])).body.data;
    const other = docs[1].id;
    const variant = await api.patch(`/datasets/${ds}/documents/${other}`, { name: 'REPORT.txt' });
    assert.equal(variant.status, 200, JSON.stringify(variant.body));
    assert.equal(variant.body.data.name, 'REPORT.txt');
    const exact = await api.patch(`/datasets/${ds}/documents/${other}`, { name: 'Report.txt' });
    assert.equal(exact.status, 400);
    assert.match(exact.body.message, /Duplicated document name/);
    // Its own name in another case is fine too, and so is its current name.
    assert.equal((await api.patch(`/datasets/${ds}/documents/${other}`, { name: 'report.TXT' })).status, 200);
  });
});
