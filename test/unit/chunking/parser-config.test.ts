import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { CHUNK_METHODS } from '../../../src/chunking/index.js';
import {
  PARSER_CONFIG_METHODS,
  PARSER_CONFIG_SCHEMA,
  deepMerge,
  defaultParserConfig,
  isParserConfigMethod,
  mergeParserConfig,
} from '../../../src/chunking/parser-config.js';

/** RAGFlow's exact default naive parser_config (reference §2), as a client may send it back. */
const RAGFLOW_NAIVE_DEFAULT = {
  table_context_size: 0,
  image_context_size: 0,
  layout_recognize: 'DeepDOC',
  chunk_token_num: 512,
  delimiter: '\n',
  auto_keywords: 0,
  auto_questions: 0,
  html4excel: false,
  topn_tags: 3,
  llm_id: 'glm-4-flash@CI@ZHIPU-AI',
  raptor: {
    use_raptor: true,
    prompt: 'Summarize the paragraphs below.\n{cluster_content}',
    max_token: 512,
    clustering_threshold: 0.3,
    clustering_ratio: 0.5,
    max_cluster: 64,
    random_seed: 0,
  },
  graphrag: {
    use_graphrag: true,
    entity_types: ['organization', 'person', 'geo', 'event', 'category'],
    method: 'light',
    batch_chunk_token_size: 4096,
    retry_attempts: 2,
    retry_backoff_seconds: 2.0,
    retry_backoff_max_seconds: 60.0,
    build_subgraph_timeout_per_chunk_seconds: 300,
    build_subgraph_min_timeout_seconds: 600,
    merge_timeout_seconds: 180,
    resolution_timeout_seconds: 1800,
    community_timeout_seconds: 1800,
    lock_acquire_timeout_seconds: 600,
  },
  parent_child: { use_parent_child: false, children_delimiter: '\n' },
  children_delimiter: '',
};

describe('chunking parser_config', () => {
  describe('defaults', () => {
    it('gives naive its spec shape, 512 tokens for datasets and 128 for documents', () => {
      const naive = {
        delimiter: '\n',
        html4excel: false,
        layout_recognize: true,
        raptor: { use_raptor: false },
        parent_child: { use_parent_child: false, children_delimiter: '\n' },
      };
      assert.deepEqual(defaultParserConfig('naive', 'dataset'), { chunk_token_num: 512, ...naive });
      assert.deepEqual(defaultParserConfig('naive', 'document'), { chunk_token_num: 128, ...naive });
    });

    it('gives raptor-only configs to qa, manual, paper, book, laws and presentation', () => {
      for (const m of ['qa', 'manual', 'paper', 'book', 'laws', 'presentation']) {
        for (const level of ['dataset', 'document'] as const) assert.deepEqual(defaultParserConfig(m, level), { raptor: { use_raptor: false } }, m);
      }
    });

    it('gives empty configs to table, picture, one, email and tag', () => {
      for (const m of ['table', 'picture', 'one', 'email', 'tag']) assert.deepEqual(defaultParserConfig(m, 'dataset'), {}, m);
    });

    it('gives knowledge_graph its spec shape', () => {
      assert.deepEqual(defaultParserConfig('knowledge_graph', 'document'), {
        chunk_token_num: 128,
        delimiter: '\n',
        entity_types: ['organization', 'person', 'location', 'event', 'time'],
      });
    });

    it('covers every chunk method and returns fresh copies', () => {
      for (const m of CHUNK_METHODS) assert.ok(isParserConfigMethod(m));
      assert.ok(PARSER_CONFIG_METHODS.includes('knowledge_graph'));
      const a = defaultParserConfig('naive', 'dataset');
      (a.raptor as Record<string, unknown>).use_raptor = true;
      assert.deepEqual(defaultParserConfig('naive', 'dataset').raptor, { use_raptor: false });
    });

    it('throws for an unknown method', () => {
      assert.throws(() => defaultParserConfig('resume', 'dataset'), /unknown chunk method/);
      assert.throws(() => mergeParserConfig('nope', 'document', {}), /unknown chunk method/);
    });
  });

  describe('mergeParserConfig', () => {
    it('deep-merges what is given over the level defaults', () => {
      const merged = mergeParserConfig('naive', 'document', {
        delimiter: '\n`##`',
        parent_child: { use_parent_child: true },
        raptor: { use_raptor: true, max_token: 1024 },
      });
      assert.deepEqual(merged, {
        chunk_token_num: 128,
        delimiter: '\n`##`',
        html4excel: false,
        layout_recognize: true,
        raptor: { use_raptor: true, max_token: 1024 },
        parent_child: { use_parent_child: true, children_delimiter: '\n' },
      });
      assert.equal(mergeParserConfig('naive', 'dataset', { delimiter: '!' }).chunk_token_num, 512);
    });

    it('replaces arrays, keeps nulls, ignores undefined and accepts nothing', () => {
      const merged = mergeParserConfig('knowledge_graph', 'dataset', { entity_types: ['person'], task_page_size: null, delimiter: undefined });
      assert.deepEqual(merged.entity_types, ['person']);
      assert.equal(merged.task_page_size, null);
      assert.equal(merged.delimiter, '\n');
      assert.deepEqual(mergeParserConfig('one', 'dataset'), {});
      assert.deepEqual(mergeParserConfig('qa', 'document', null), { raptor: { use_raptor: false } });
    });

    it('does not share objects with its input', () => {
      const given = { graphrag: { entity_types: ['a'] } };
      const merged = mergeParserConfig('table', 'dataset', given);
      (merged.graphrag as { entity_types: string[] }).entity_types.push('b');
      assert.deepEqual(given.graphrag.entity_types, ['a']);
    });

    it('exposes the deep merge for stored configs', () => {
      assert.deepEqual(deepMerge({ a: { b: 1, c: [1] }, d: 1 }, { a: { c: [2] }, e: null }), { a: { b: 1, c: [2] }, d: 1, e: null });
    });

    it('raises raptor.max_token below 512 to 512, as RAGFlow does', () => {
      assert.deepEqual(mergeParserConfig('laws', 'dataset', { raptor: { max_token: 100 } }).raptor, { use_raptor: false, max_token: 512 });
    });
  });

  describe('PARSER_CONFIG_SCHEMA', () => {
    const validators = [
      ['ajv (draft-07)', new Ajv({ strict: false }).compile(PARSER_CONFIG_SCHEMA)],
      ['ajv 2020-12, strict', new Ajv2020({ strict: true }).compile(PARSER_CONFIG_SCHEMA)],
    ] as const;

    for (const [name, validate] of validators) {
      describe(name, () => {
        it('accepts every default and RAGFlow\'s own default', () => {
          for (const m of PARSER_CONFIG_METHODS) {
            for (const level of ['dataset', 'document'] as const) assert.ok(validate(defaultParserConfig(m, level)), `${m} ${level}`);
          }
          assert.ok(validate(RAGFLOW_NAIVE_DEFAULT), JSON.stringify(validate.errors));
          assert.ok(validate({}));
        });

        it('accepts the other ParserConfig keys', () => {
          const ok = {
            enable_children: true,
            tag_kb_ids: ['a'],
            filename_embd_weight: 0.1,
            task_page_size: 12,
            pages: [[1, 10]],
            compilation_template_group_id: [],
            ext: { anything: 1 },
            table_column_mode: 'manual',
            table_column_roles: { price: 'metadata' },
            table_column_names: ['price'],
            raptor: { scope: 'dataset', auto_disable_for_structured_data: true },
            graphrag: { community: true, resolution: false, method: 'general' },
          };
          assert.ok(validate(ok), JSON.stringify(validate.errors));
          assert.ok(validate({ task_page_size: null, pages: null, table_column_mode: null }));
        });

        const rejected: Array<[string, unknown]> = [
          ['chunk_token_num 0', { chunk_token_num: 0 }],
          ['chunk_token_num 2049', { chunk_token_num: 2049 }],
          ['chunk_token_num as text', { chunk_token_num: '512' }],
          ['chunk_token_num fractional', { chunk_token_num: 12.5 }],
          ['empty delimiter', { delimiter: '' }],
          ['delimiter not text', { delimiter: 5 }],
          ['html4excel as number', { html4excel: 1 }],
          ['layout_recognize as number', { layout_recognize: 1 }],
          ['unknown key', { chunk_size: 100 }],
          ['unknown raptor key', { raptor: { use_raptor: true, depth: 3 } }],
          ['raptor.use_raptor as text', { raptor: { use_raptor: 'yes' } }],
          ['raptor.max_token above 2048', { raptor: { max_token: 4096 } }],
          ['raptor.clustering_threshold above 1', { raptor: { clustering_threshold: 1.5 } }],
          ['empty children_delimiter', { parent_child: { use_parent_child: true, children_delimiter: '' } }],
          ['parent_child not an object', { parent_child: true }],
          ['auto_keywords above 32', { auto_keywords: 33 }],
          ['auto_questions below 0', { auto_questions: -1 }],
          ['auto_keywords below 0', { auto_keywords: -1 }],
          ['auto_questions above 10', { auto_questions: 11 }],
          ['raptor.max_cluster 0', { raptor: { max_cluster: 0 } }],
          ['raptor.max_cluster above 1024', { raptor: { max_cluster: 1025 } }],
          ['raptor.random_seed below 0', { raptor: { random_seed: -1 } }],
          ['raptor.scope unknown', { raptor: { scope: 'tenant' } }],
          ['graphrag.retry_attempts above 10', { graphrag: { retry_attempts: 11 } }],
          ['graphrag.retry_backoff_seconds below 0', { graphrag: { retry_backoff_seconds: -1 } }],
          ['unknown graphrag key', { graphrag: { depth: 2 } }],
          ['topn_tags above 10', { topn_tags: 11 }],
          ['filename_embd_weight above 1', { filename_embd_weight: 1.5 }],
          ['task_page_size 0', { task_page_size: 0 }],
          ['pages of text', { pages: [['1', '2']] }],
          ['tag_kb_ids not text', { tag_kb_ids: [1] }],
          ['topn_tags 0', { topn_tags: 0 }],
          ['graphrag.method unknown', { graphrag: { method: 'heavy' } }],
          ['graphrag.batch_chunk_token_size too small', { graphrag: { batch_chunk_token_size: 100 } }],
          ['entity_types not a list', { entity_types: 'person' }],
          ['table_column_roles value unknown', { table_column_roles: { a: 'key' } }],
          ['not an object', 'naive'],
          ['null', null],
        ];
        for (const [what, value] of rejected) {
          it(`rejects ${what}`, () => assert.equal(validate(value), false));
        }
      });
    }
  });
});
