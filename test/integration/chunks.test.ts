import assert from 'node:assert/strict';
import { createCanvas } from '@napi-rs/canvas';
import { newUser, type Api } from './client.js';
import { upload } from './documents-helpers.js';

function png(width: number, height: number, colour: string): string {
  const canvas = createCanvas(width, height);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = colour;
  ctx.fillRect(0, 0, width, height);
  return canvas.toBuffer('image/png').toString('base64');
}

describe('chunks over HTTP', () => {
  let api: Api;
  let ds: string;
  let doc: string;
  let base: string;

  before(async () => {
    api = (await newUser('chunks')).api;
    ds = (await api.post('/datasets', { name: 'chunks' })).body.data.id;
    doc = (await upload(api, ds, [{ name: 'manual.txt', bytes: Buffer.from('placeholder') }])).body.data[0].id;
    base = `/datasets/${ds}/documents/${doc}/chunks`;
  });

  it('adds a chunk with the spec fields, embedded and searchable at once', async () => {
    const res = await api.post(base, { content: 'Basalt cairns mark the northern ridge path.', important_keywords: ['basalt'], questions: ['Which cairns mark the ridge?'], tag_kwd: ['geology'] });
    assert.equal(res.status, 200);
    const c = res.body.data.chunk;
    assert.equal(c.content, 'Basalt cairns mark the northern ridge path.');
    assert.deepEqual(c.important_keywords, ['basalt']);
    assert.deepEqual(c.questions, ['Which cairns mark the ridge?']);
    assert.deepEqual(c.tag_kwd, ['geology']);
    assert.equal(c.image_id, '');
    assert.equal(c.available, true);
    assert.equal(c.dataset_id, ds);
    assert.equal(c.document_id, doc);
    assert.equal(c.document_name, 'manual.txt');
    assert.match(c.create_time, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    assert.ok(Math.abs(c.create_timestamp - Date.now() / 1000) < 60);
    const hit = await api.post('/retrieval', { question: 'basalt ridge cairns', dataset_ids: [ds] });
    assert.ok(hit.body.data.chunks.some((x: any) => x.id === c.id));
    const counts = (await api.get(`/datasets/${ds}/documents`, { id: doc })).body.data.docs[0];
    assert.equal(counts.chunk_count, 1);
  });

  it('requires content', async () => {
    assert.equal((await api.post(base, { content: '' })).status, 400);
    assert.equal((await api.post(base, {})).status, 400);
  });

  it('lists with keywords, paging and id; an unknown id is 1001 Invalid Chunk ID', async () => {
    await api.post(base, { content: 'Granite cairns line the valley trail.' });
    await api.post(base, { content: 'Limestone cairns guide walkers in fog.' });
    const all = await api.get(base);
    assert.equal(all.body.data.total, 3);
    assert.equal(all.body.data.doc.id, doc);
    const kw = await api.get(base, { keywords: 'GRANITE' });
    assert.deepEqual(kw.body.data.chunks.map((c: any) => c.content), ['Granite cairns line the valley trail.']);
    const [granite] = kw.body.data.chunks;
    assert.deepEqual([granite.content_with_weight, granite.doc_id], [granite.content, doc], "RAGFlow's names beside Cairn's");
    const paged = await api.get(base, { page: 2, page_size: 2 });
    assert.equal(paged.body.data.chunks.length, 1);
    const one = await api.get(base, { id: kw.body.data.chunks[0].id });
    assert.equal(one.body.data.chunks[0].id, kw.body.data.chunks[0].id);
    const bad = await api.get(base, { id: 'f'.repeat(32) });
    assert.equal(bad.status, 404);
    assert.equal(bad.body.code, 1001);
    assert.match(bad.body.message, /Invalid Chunk ID/);
  });

  it('updates content and re-embeds it: retrieval finds the new text', async () => {
    const c = (await api.post(base, { content: 'Sandstone markers at the old quarry.' })).body.data.chunk;
    const res = await api.patch(`${base}/${c.id}`, { content: 'Quartzite markers beside the glacier lake.', important_keywords: ['quartzite'] });
    assert.equal(res.status, 200);
    const hits = await api.post('/retrieval', { question: 'quartzite glacier lake', dataset_ids: [ds], vector_similarity_weight: 1, similarity_threshold: 0 });
    const found = hits.body.data.chunks.find((x: any) => x.id === c.id);
    assert.equal(found.content, 'Quartzite markers beside the glacier lake.');
    assert.equal(hits.body.data.chunks[0].id, c.id, 'the re-embedded vector ranks it first on vector similarity alone');
  });

  it('hides an unavailable chunk from retrieval and brings it back', async () => {
    const c = (await api.post(base, { content: 'Obsidian cairn near the volcano crater.' })).body.data.chunk;
    const ask = async () => (await api.post('/retrieval', { question: 'obsidian volcano crater', dataset_ids: [ds] })).body.data.chunks.map((x: any) => x.id);
    assert.ok((await ask()).includes(c.id));
    await api.patch(`${base}/${c.id}`, { available: false });
    assert.ok(!(await ask()).includes(c.id));
    assert.equal((await api.get(base, { id: c.id })).body.data.chunks[0].available, false);
    await api.patch(`${base}/${c.id}`, { available: true });
    assert.ok((await ask()).includes(c.id));
  });

  it('answers 1001 for an unknown chunk and 1002 for a failed update', async () => {
    const missing = await api.patch(`${base}/${'e'.repeat(32)}`, { content: 'x' });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 1001);
    const c = (await api.post(base, { content: 'Slate cairn.' })).body.data.chunk;
    const wrongType = await api.patch(`${base}/${c.id}`, { important_keywords: 'not-a-list' });
    assert.equal(wrongType.status, 400);
    assert.equal(wrongType.body.code, 1002);
    const blank = await api.patch(`${base}/${c.id}`, { content: '   ' });
    assert.equal(blank.body.code, 1002);
    const badImage = await api.patch(`${base}/${c.id}`, { image_base64: Buffer.from('not an image').toString('base64') });
    assert.equal(badImage.body.code, 1002);
  });

  it('stacks a new image below the existing one', async () => {
    const first = (await api.post(base, { content: 'Cairn with a photo.', image_base64: png(40, 30, '#ff0000') })).body.data.chunk;
    assert.match(first.image_id, new RegExp(`^${ds}-`));
    await api.patch(`${base}/${first.id}`, { image_base64: png(60, 20, '#0000ff') });
    const res = await fetch(`${api.url}/api/v1/documents/images/${first.image_id}`, { headers: { Authorization: `Bearer ${api.key}` } });
    assert.equal(res.status, 200);
    const bytes = Buffer.from(await res.arrayBuffer());
    // PNG IHDR: width at byte 16, height at byte 20.
    assert.equal(bytes.readUInt32BE(16), 60);
    assert.equal(bytes.readUInt32BE(20), 50);
  });

  it('deletes by ids and with delete_all; only unknown ids is a 1001 that deletes nothing', async () => {
    const before = (await api.get(base)).body.data.total;
    const c = (await api.post(base, { content: 'To be deleted.' })).body.data.chunk;
    assert.equal((await api.delete(base, { chunk_ids: null })).body.data.deleted, 0);
    const unknown = await api.delete(base, { chunk_ids: ['d'.repeat(32), 'e'.repeat(32)] });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 1001);
    assert.ok(unknown.body.message.includes('d'.repeat(32)) && unknown.body.message.includes('e'.repeat(32)), unknown.body.message);
    assert.equal((await api.get(base)).body.data.total, before + 1);
    assert.equal((await api.delete(base, { chunk_ids: [c.id] })).body.data.deleted, 1);
    assert.equal((await api.delete(base, { delete_all: true })).body.data.deleted, before);
    assert.equal((await api.get(base)).body.data.total, 0);
    const docRow = (await api.get(`/datasets/${ds}/documents`, { id: doc })).body.data.docs[0];
    assert.equal(docRow.chunk_count, 0);
  });

  it('a batch chunk delete with unknown or duplicate ids deletes the valid ones: code 0, data {success_count, errors}', async () => {
    const before = (await api.get(base)).body.data.total;
    const c1 = (await api.post(base, { content: 'Partial one.' })).body.data.chunk;
    const c2 = (await api.post(base, { content: 'Partial two.' })).body.data.chunk;
    const missing = 'd'.repeat(32);
    const res = await api.delete(base, { chunk_ids: [c1.id, missing, c1.id] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.code, 0);
    assert.equal(res.body.data.success_count, 1);
    assert.equal(res.body.data.errors.length, 2, JSON.stringify(res.body.data.errors));
    assert.ok(res.body.data.errors.some((e: string) => e.includes(missing)), 'the unknown id is named');
    assert.ok(res.body.data.errors.some((e: string) => /duplicate/i.test(e) && e.includes(c1.id)), 'the duplicate id is named');
    assert.equal((await api.get(base)).body.data.total, before + 1);
    assert.equal((await api.get(`${base}/${c2.id}`)).status, 200);
    assert.equal((await api.delete(base, { chunk_ids: [c2.id] })).body.data.deleted, 1);
  });

  it('keeps chunks private to their tenant', async () => {
    const other = (await newUser('chunk-thief')).api;
    const c = (await api.post(base, { content: 'Private cairn.' })).body.data.chunk;
    assert.equal((await other.get(base)).status, 404);
    assert.equal((await other.post(base, { content: 'x' })).status, 404);
    assert.equal((await other.patch(`${base}/${c.id}`, { content: 'mine' })).status, 404);
    assert.equal((await other.delete(base, { chunk_ids: [c.id] })).status, 404);
    assert.equal((await other.post('/retrieval', { question: 'private cairn', dataset_ids: [ds] })).status, 404);
  });
});
