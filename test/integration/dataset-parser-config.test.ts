import assert from 'node:assert/strict';
import { Api, newUser } from './client.js';
import { upload } from './documents-helpers.js';

/** A 400 whose message names the given key path. */
function assertRejected(res: { status: number; body: any }, path: string) {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.code, 400);
  assert.ok(res.body.message.includes(`\`${path}\``), `message names ${path}: ${res.body.message}`);
}

/** Each invalid parser_config and the key path its 400 must name. */
const INVALID: Array<[unknown, string]> = [
  [{ auto_keywords: -1 }, 'parser_config.auto_keywords'],
  [{ auto_keywords: 33 }, 'parser_config.auto_keywords'],
  [{ auto_questions: 11 }, 'parser_config.auto_questions'],
  [{ chunk_token_num: 'x' }, 'parser_config.chunk_token_num'],
  [{ chunk_token_num: 0 }, 'parser_config.chunk_token_num'],
  [{ chunk_token_num: 2049 }, 'parser_config.chunk_token_num'],
  [{ chunk_token_num: 12.5 }, 'parser_config.chunk_token_num'],
  [{ delimiter: '' }, 'parser_config.delimiter'],
  [{ html4excel: 'yes' }, 'parser_config.html4excel'],
  [{ layout_recognize: 1 }, 'parser_config.layout_recognize'],
  [{ raptor: { max_cluster: 0 } }, 'parser_config.raptor.max_cluster'],
  [{ raptor: { max_cluster: 1025 } }, 'parser_config.raptor.max_cluster'],
  [{ raptor: { max_token: 4096 } }, 'parser_config.raptor.max_token'],
  [{ raptor: { clustering_threshold: 1.5 } }, 'parser_config.raptor.clustering_threshold'],
  [{ raptor: { random_seed: -1 } }, 'parser_config.raptor.random_seed'],
  [{ raptor: { scope: 'world' } }, 'parser_config.raptor.scope'],
  [{ raptor: { use_raptor: 'true' } }, 'parser_config.raptor.use_raptor'],
  [{ raptor: { depth: 3 } }, 'parser_config.raptor.depth'],
  [{ graphrag: { method: 'heavy' } }, 'parser_config.graphrag.method'],
  [{ graphrag: { batch_chunk_token_size: 100 } }, 'parser_config.graphrag.batch_chunk_token_size'],
  [{ graphrag: { retry_attempts: 11 } }, 'parser_config.graphrag.retry_attempts'],
  [{ graphrag: { entity_types: 'person' } }, 'parser_config.graphrag.entity_types'],
  [{ parent_child: { children_delimiter: '' } }, 'parser_config.parent_child.children_delimiter'],
  [{ tag_kb_ids: [1] }, 'parser_config.tag_kb_ids.0'],
  [{ topn_tags: 0 }, 'parser_config.topn_tags'],
  [{ topn_tags: 11 }, 'parser_config.topn_tags'],
  [{ filename_embd_weight: 1.5 }, 'parser_config.filename_embd_weight'],
  [{ task_page_size: 0 }, 'parser_config.task_page_size'],
  [{ pages: [['1', 10]] }, 'parser_config.pages.0.0'],
  [{ chunk_size: 100 }, 'parser_config.chunk_size'],
];

describe('dataset parser_config is RAGFlow\'s ParserConfig over HTTP', () => {
  let api: Api;
  let seq = 0;
  const name = () => `pc-${++seq}`;

  before(async () => {
    api = (await newUser('dspc')).api;
  });

  describe('on create', () => {
    for (const [config, path] of INVALID) {
      it(`refuses ${JSON.stringify(config)} with a 400 naming ${path}`, async () => {
        assertRejected(await api.post('/datasets', { name: name(), parser_config: config }), path);
      });
    }

    it('refuses a parser_config that is not an object with a 400 naming parser_config', async () => {
      assertRejected(await api.post('/datasets', { name: name(), parser_config: 'naive' }), 'parser_config');
    });

    it('refuses a parser_config longer than 65,535 characters serialized', async () => {
      const res = await api.post('/datasets', { name: name(), parser_config: { tag_kb_ids: Array.from({ length: 7000 }, (_, i) => `kb-${i}-xxxxx`) } });
      assert.equal(res.status, 400);
      assert.match(res.body.message, /Parser config exceeds size limit \(max 65,535 characters\)\. Current size: \d+/);
    });

    it('stores nothing when it refuses', async () => {
      const res = await api.post('/datasets', { name: 'never-stored', parser_config: { auto_keywords: -1 } });
      assert.equal(res.status, 400);
      const list = await api.get('/datasets', { name: 'never-stored' });
      assert.notEqual(list.body.code, 0);
    });

    it('stores a valid config merged over the naive defaults', async () => {
      const res = await api.post('/datasets', {
        name: name(),
        parser_config: { auto_keywords: 5, auto_questions: 2, raptor: { use_raptor: true, max_cluster: 64 }, graphrag: { use_graphrag: true, method: 'general' } },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.data.parser_config, {
        chunk_token_num: 512,
        delimiter: '\n',
        html4excel: false,
        layout_recognize: true,
        raptor: { use_raptor: true, max_cluster: 64 },
        parent_child: { use_parent_child: false, children_delimiter: '\n' },
        auto_keywords: 5,
        auto_questions: 2,
        graphrag: { use_graphrag: true, method: 'general' },
      });
      const again = await api.get(`/datasets/${res.body.data.id}`);
      assert.deepEqual(again.body.data.parser_config, res.body.data.parser_config);
    });

    it('stores a valid config merged over the qa defaults (raptor off kept)', async () => {
      const res = await api.post('/datasets', { name: name(), chunk_method: 'qa', parser_config: { topn_tags: 10, filename_embd_weight: 0.5 } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.data.parser_config, { raptor: { use_raptor: false }, topn_tags: 10, filename_embd_weight: 0.5 });
    });

    it('accepts the range edges and RAGFlow\'s own layout_recognize name', async () => {
      const config = {
        auto_keywords: 32,
        auto_questions: 10,
        chunk_token_num: 2048,
        layout_recognize: 'DeepDOC',
        raptor: { max_cluster: 1024, clustering_threshold: 1, clustering_ratio: 0, random_seed: 0, max_token: 2048, scope: 'dataset' },
        graphrag: { batch_chunk_token_size: 8196, retry_attempts: 10, retry_backoff_seconds: 0 },
        topn_tags: 1,
        filename_embd_weight: 0,
        task_page_size: null,
        pages: [[1, 100000]],
        tag_kb_ids: [],
      };
      const res = await api.post('/datasets', { name: name(), parser_config: config });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      for (const [key, value] of Object.entries(config)) {
        if (key === 'raptor') assert.deepEqual(res.body.data.parser_config.raptor, { use_raptor: false, ...config.raptor });
        else assert.deepEqual(res.body.data.parser_config[key], value, key);
      }
    });

    it('treats null and {} as not given: the method defaults', async () => {
      for (const parser_config of [null, {}]) {
        const res = await api.post('/datasets', { name: name(), chunk_method: 'manual', parser_config });
        assert.equal(res.status, 200);
        assert.deepEqual(res.body.data.parser_config, { raptor: { use_raptor: false } });
      }
    });
  });

  describe('on update', () => {
    let id: string;
    before(async () => {
      id = (await api.post('/datasets', { name: 'pc-update', parser_config: { chunk_token_num: 300 } })).body.data.id;
    });

    for (const [config, path] of INVALID) {
      it(`refuses ${JSON.stringify(config)} with a 400 naming ${path}`, async () => {
        assertRejected(await api.put(`/datasets/${id}`, { parser_config: config }), path);
      });
    }

    it('leaves the stored config untouched when it refuses', async () => {
      const res = await api.put(`/datasets/${id}`, { parser_config: { chunk_token_num: 1000, raptor: { max_cluster: 0 } } });
      assert.equal(res.status, 400);
      assert.equal((await api.get(`/datasets/${id}`)).body.data.parser_config.chunk_token_num, 300);
    });

    it('stores a valid config merged over the current one and the defaults', async () => {
      const res = await api.put(`/datasets/${id}`, { parser_config: { raptor: { use_raptor: true, max_cluster: 8 }, auto_keywords: 3 } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.data.parser_config, {
        chunk_token_num: 300,
        delimiter: '\n',
        html4excel: false,
        layout_recognize: true,
        raptor: { use_raptor: true, max_cluster: 8 },
        parent_child: { use_parent_child: false, children_delimiter: '\n' },
        auto_keywords: 3,
      });
    });

    it('validates a config given with a new chunk method and merges it over that method\'s defaults', async () => {
      const ds = (await api.post('/datasets', { name: name() })).body.data;
      assertRejected(await api.put(`/datasets/${ds.id}`, { chunk_method: 'paper', parser_config: { auto_questions: -1 } }), 'parser_config.auto_questions');
      const res = await api.put(`/datasets/${ds.id}`, { chunk_method: 'paper', parser_config: { auto_questions: 4 } });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.data.parser_config, { raptor: { use_raptor: false }, auto_questions: 4 });
    });
  });

  describe('document-level parser_config uses the same schema', () => {
    let datasetId: string;
    let documentId: string;
    before(async () => {
      datasetId = (await api.post('/datasets', { name: 'pc-docs' })).body.data.id;
      const res = await upload(api, datasetId, [{ name: 'a.txt', bytes: Buffer.from('hello') }]);
      documentId = res.body.data[0].id;
    });

    for (const [config, path] of INVALID) {
      it(`refuses ${JSON.stringify(config)} on a document with a 400 naming ${path}`, async () => {
        assertRejected(await api.patch(`/datasets/${datasetId}/documents/${documentId}`, { parser_config: config }), path);
      });
    }

    it('stores a valid document config merged over the document-level defaults', async () => {
      const res = await api.patch(`/datasets/${datasetId}/documents/${documentId}`, { parser_config: { auto_keywords: 2, raptor: { max_cluster: 16 } } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.parser_config.chunk_token_num, 128);
      assert.equal(res.body.data.parser_config.auto_keywords, 2);
      assert.deepEqual(res.body.data.parser_config.raptor, { use_raptor: false, max_cluster: 16 });
    });
  });
});
