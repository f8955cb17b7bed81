import assert from 'node:assert/strict';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/index.js';
import { newUser, type Api, type ApiResponse } from './client.js';
import { upload } from './documents-helpers.js';
import { createChat, userWithModel } from './chat-helpers.js';

/** A 400 (code 400) whose message names the given field in backticks. */
function assertRejected(res: ApiResponse, field: string) {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.code, 400);
  assert.ok(res.body.message.includes(`\`${field}\``), `message names ${field}: ${res.body.message}`);
}

function assertOk(res: ApiResponse) {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.code, 0);
}

describe('RAGFlow leniency and strictness (issue 15 items 4 and 5)', function () {
  let api: Api;
  let tag: string;
  const names: string[] = [];

  before(async () => {
    api = (await newUser('lenient')).api;
    tag = `len${Date.now().toString(36)}`;
    for (let i = 0; i < 3; i++) {
      const res = await api.post('/datasets', { name: `${tag}-${i}` });
      assertOk(res);
      names.push(res.body.data.name);
    }
  });

  const listNames = async (query: Record<string, unknown>) => {
    const res = await api.get('/datasets', query);
    assertOk(res);
    return res.body.data.map((d: any) => d.name) as string[];
  };

  describe('lenient where RAGFlow is lenient', () => {
    for (const [word, desc] of [['true', true], ['false', false], ['1', true], ['0', false], ['yes', true], ['no', false], ['YES', true], ['No', false], ['False', false]] as const) {
      it(`reads the query boolean desc=${word} as ${desc}`, async () => {
        const got = await listNames({ desc: word, orderby: 'create_time' });
        assert.deepEqual(got, desc ? [...names].reverse() : names);
      });
    }

    it('reads a boolean filter given as yes (include_parsing_status=yes adds parsing_status)', async () => {
      const res = await api.get('/datasets', { include_parsing_status: 'yes' });
      assertOk(res);
      assert.ok(res.body.data.every((d: any) => d.parsing_status && typeof d.parsing_status === 'object'));
      const no = await api.get('/datasets', { include_parsing_status: '0' });
      assert.ok(no.body.data.every((d: any) => d.parsing_status === undefined));
    });

    it('still refuses a query boolean that is no boolean word', async () => {
      assertRejected(await api.get('/datasets', { desc: 'maybe' }), 'desc');
    });

    it('reads integers given as numeric strings (page=2, page_size=1)', async () => {
      assert.deepEqual(await listNames({ page: '2', page_size: '1', desc: 'false' }), [names[1]]);
    });

    it('treats page=0 as the default page 1', async () => {
      assert.deepEqual(await listNames({ page: 0, page_size: 1, desc: 'false' }), [names[0]]);
    });

    it('treats page_size=0 as the default page size', async () => {
      assert.deepEqual(await listNames({ page_size: 0, desc: 'false' }), names);
    });

    it('clamps page_size above the cap of 100 instead of refusing it', async () => {
      assert.deepEqual(await listNames({ page_size: 1000, desc: 'false' }), names);
      assert.deepEqual(await listNames({ page_size: '101', desc: 'false' }), names);
    });

    it('clamps page_size on the other paged routes too (documents, chats)', async () => {
      const ds = (await api.get('/datasets', { name: names[0] })).body.data[0].id;
      assertOk(await api.get(`/datasets/${ds}/documents`, { page_size: 500, page: 0 }));
      assertOk(await api.get('/chats', { page_size: 500, page: '0' }));
    });

    it('treats an empty id filter as no filter (datasets, documents, chats)', async () => {
      assert.deepEqual(await listNames({ id: '', desc: 'false' }), names);
      const ds = (await api.get('/datasets', { name: names[0] })).body.data[0].id;
      await upload(api, ds, [{ name: 'a.txt', bytes: Buffer.from('alpha') }, { name: 'b.txt', bytes: Buffer.from('beta') }]);
      const docs = await api.get(`/datasets/${ds}/documents`, { id: '' });
      assertOk(docs);
      assert.equal(docs.body.data.total, 2);
      assertOk(await api.get('/chats', { id: '' }));
    });

    describe('chunk available as 0/1', () => {
      let base: string;
      let chunkId: string;

      before(async () => {
        const ds = (await api.post('/datasets', { name: `${tag}-chunks` })).body.data.id;
        const doc = (await upload(api, ds, [{ name: 'c.txt', bytes: Buffer.from('placeholder') }])).body.data[0].id;
        base = `/datasets/${ds}/documents/${doc}/chunks`;
        const added = await api.post(base, { content: 'Granite cairns mark the pass.' });
        assertOk(added);
        chunkId = added.body.data.chunk.id;
        await api.post(base, { content: 'Slate cairns mark the valley.' });
      });

      it('accepts available: 0 as false and available: 1 as true', async () => {
        assertOk(await api.patch(`${base}/${chunkId}`, { available: 0 }));
        assert.equal((await api.get(`${base}/${chunkId}`)).body.data.available, false);
        assertOk(await api.patch(`${base}/${chunkId}`, { available: 1 }));
        assert.equal((await api.get(`${base}/${chunkId}`)).body.data.available, true);
      });

      it('still refuses available values other than a boolean, 0 or 1', async () => {
        for (const available of [2, 'yes']) {
          const res = await api.patch(`${base}/${chunkId}`, { available });
          assert.equal(res.status, 400, JSON.stringify(res.body));
          assert.match(res.body.message, /available/);
        }
      });

      it('treats an empty chunk id filter as no filter', async () => {
        const res = await api.get(base, { id: '' });
        assertOk(res);
        assert.equal(res.body.data.total, 2);
      });
    });
  });

  describe('chat assistants', () => {
    let fake: FakeOpenAI;
    let chatApi: Api;

    before(async () => {
      fake = await startFakeOpenAI();
      ({ api: chatApi } = await userWithModel('lenient-chats', fake.baseUrl));
    });

    after(() => fake.close());

    it('accepts prompt_config.parameters[].value and ignores it', async () => {
      const chat = await createChat(chatApi, {
        name: 'with-values',
        prompt_config: { system: 'Answer about {topic} from {knowledge}.', parameters: [{ key: 'knowledge', optional: false, value: '' }, { key: 'topic', optional: true, value: 'rocks' }] },
      });
      assert.deepEqual(chat.prompt_config.parameters, [{ key: 'knowledge', optional: false }, { key: 'topic', optional: true }]);
    });

    it('accepts llm_setting.model_type and ignores it', async () => {
      const chat = await createChat(chatApi, { name: 'with-model-type', llm_setting: { model_type: 'chat', temperature: 0.5 } });
      assert.equal(chat.llm_setting.temperature, 0.5);
      assert.equal(chat.llm_setting.model_type, undefined);
      const updated = await chatApi.patch(`/chats/${chat.id}`, { llm_setting: { model_type: 'vision' } });
      assertOk(updated);
      assert.equal(updated.body.data.llm_setting.model_type, undefined);
      assertRejected(await chatApi.patch(`/chats/${chat.id}`, { llm_setting: { model_type: 'audio' } }), 'llm_setting.model_type');
    });

    it('keeps chat names unique per tenant case-insensitively (400 with RAGFlow\'s message)', async () => {
      const first = await createChat(chatApi, { name: 'Ridge Guide' });
      const dup = await chatApi.post('/chats', { name: 'RIDGE guide' });
      assert.equal(dup.status, 400);
      assert.equal(dup.body.code, 400);
      assert.equal(dup.body.message, 'Duplicated chat name in creating chat');
      const other = await createChat(chatApi, { name: 'Valley Guide' });
      const rename = await chatApi.patch(`/chats/${other.id}`, { name: 'ridge GUIDE' });
      assert.equal(rename.status, 400);
      assert.equal(rename.body.message, 'Duplicated chat name');
      assertOk(await chatApi.patch(`/chats/${first.id}`, { name: 'RIDGE GUIDE' }));
      const elsewhere = await userWithModel('lenient-chats-2', fake.baseUrl);
      await createChat(elsewhere.api, { name: 'ridge guide' });
    });
  });

  describe('strict where RAGFlow is strict', () => {
    it('refuses an embedding_model of "" or blanks with a 400, on create and on update', async () => {
      for (const embedding_model of ['', '   ']) {
        assertRejected(await api.post('/datasets', { name: `${tag}-emb`, embedding_model }), 'embedding_model');
      }
      const ds = (await api.get('/datasets', { name: names[2] })).body.data[0].id;
      for (const embedding_model of ['', ' \t ']) {
        assertRejected(await api.put(`/datasets/${ds}`, { embedding_model }), 'embedding_model');
      }
      assertOk(await api.post('/datasets', { name: `${tag}-emb-null`, embedding_model: null }));
    });

    describe('document updates', () => {
      let docPath: string;

      before(async () => {
        const ds = (await api.post('/datasets', { name: `${tag}-docs` })).body.data.id;
        const doc = (await upload(api, ds, [{ name: 'm.txt', bytes: Buffer.from('meta') }])).body.data[0].id;
        docPath = `/datasets/${ds}/documents/${doc}`;
      });

      for (const field of ['chunk_count', 'token_count', 'progress']) {
        it(`refuses to set ${field} with a 400 naming it`, async () => {
          assertRejected(await api.patch(docPath, { [field]: 3 }), field);
          assertRejected(await api.put(docPath, { name: 'm.txt', [field]: 0 }), field);
        });
      }

      it('accepts meta_fields of scalars and lists of scalars', async () => {
        const meta_fields = { region: 'alps', year: 2021, ratio: 0.5, open: true, tags: ['snow', 3, false] };
        const res = await api.patch(docPath, { meta_fields });
        assertOk(res);
        assert.deepEqual(res.body.data.meta_fields, meta_fields);
      });

      for (const [value, field] of [[{ a: 1 }, 'meta_fields.bad'], [[{ a: 1 }], 'meta_fields.bad.0'], [[[1, 2]], 'meta_fields.bad.0'], [['ok', null], 'meta_fields.bad.1']] as const) {
        it(`refuses a meta_fields value ${JSON.stringify(value)} (not a scalar or a list of scalars)`, async () => {
          assertRejected(await api.patch(docPath, { meta_fields: { good: 'x', bad: value } }), field);
        });
      }
    });

    const MALFORMED: Array<[unknown, string]> = [
      ['region=alps', 'metadata_condition'],
      [[{ name: 'region', comparison_operator: '=', value: 'alps' }], 'metadata_condition'],
      [{ conditions: 'region=alps' }, 'metadata_condition.conditions'],
      [{ logic: 'xor', conditions: [] }, 'metadata_condition.logic'],
      [{ conditions: [{ comparison_operator: '=', value: 'alps' }] }, 'metadata_condition.conditions.0.name'],
      [{ conditions: [{ name: '', comparison_operator: '=', value: 'alps' }] }, 'metadata_condition.conditions.0.name'],
      [{ conditions: [{ name: 'region', comparison_operator: 'like', value: 'alps' }] }, 'metadata_condition.conditions.0.comparison_operator'],
      [{ conditions: [{ name: 'region', op: '=', comparison_operator: '=' }] }, 'metadata_condition.conditions.0.op'],
      [{ logical_operator: 'and', conditions: [] }, 'metadata_condition.logical_operator'],
    ];
    for (const [condition, field] of MALFORMED) {
      it(`refuses a malformed metadata_condition ${JSON.stringify(condition)} with a 400 naming ${field}`, async () => {
        const ds = (await api.get('/datasets', { name: names[0] })).body.data[0].id;
        assertRejected(await api.post('/retrieval', { question: 'cairns', dataset_ids: [ds], metadata_condition: condition }), field);
      });
    }
  });
});
