import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DslError } from '../../../src/agents/validate.js';
import { validatePipelineDsl } from '../../../src/pipelines/validate.js';
import { pipelineComponentName } from '../../../src/pipelines/names.js';

type Dsl = { components: Record<string, { obj: { component_name: string; params: Record<string, unknown> }; downstream: string[]; upstream: string[] }>; [k: string]: unknown };

const FIXTURES = ['enrich_all', 'summarized_chunks', 'by_headings', 'compiled'] as const;

/** A fixture's DSL (the compiled one is a bare DSL, the others RAGFlow's template wrapper). */
function fixture(name: string): Dsl {
  const json = JSON.parse(readFileSync(new URL(`../../fixtures/pipelines/${name}.json`, import.meta.url), 'utf8')) as { dsl?: Dsl } & Dsl;
  return json.dsl ?? json;
}

/** File -> <id> -> Tokenizer:Index, with the given component in the middle. */
function pipeline(id: string, component_name: string, params: Record<string, unknown>): Dsl {
  return {
    components: {
      File: { obj: { component_name: 'File', params: {} }, downstream: [id], upstream: [] },
      [id]: { obj: { component_name, params }, downstream: ['Tokenizer:Index'], upstream: ['File'] },
      'Tokenizer:Index': { obj: { component_name: 'Tokenizer', params: {} }, downstream: [], upstream: [id] },
    },
  };
}

function rejects(dsl: unknown, message: string | RegExp): DslError {
  let caught: unknown;
  assert.throws(
    () => validatePipelineDsl(dsl),
    (err: unknown) => {
      caught = err;
      return err instanceof DslError && (typeof message === 'string' ? err.message === message : message.test(err.message));
    },
    `expected a DslError ${String(message)}`,
  );
  return caught as DslError;
}

const passes = (dsl: unknown) => assert.doesNotThrow(() => validatePipelineDsl(dsl));
const parser = (params: Record<string, unknown>) => pipeline('Parser:P', 'Parser', params);
const tokenChunker = (params: Record<string, unknown>) => pipeline('TokenChunker:T', 'TokenChunker', params);
const titleChunker = (params: Record<string, unknown>) => pipeline('TitleChunker:H', 'TitleChunker', { method: 'hierarchy', hierarchy: 2, levels: [['^#[^#]']], ...params });
const extractor = (params: Record<string, unknown>) => pipeline('Extractor:E', 'Extractor', { field_name: 'summary', ...params });
const tokenizer = (params: Record<string, unknown>): Dsl => ({
  components: {
    File: { obj: { component_name: 'File', params: {} }, downstream: ['Tokenizer:Index'], upstream: [] },
    'Tokenizer:Index': { obj: { component_name: 'Tokenizer', params }, downstream: [], upstream: ['File'] },
  },
});

describe('pipelines: DSL validation', () => {
  describe('the fixtures in RAGFlow template format', () => {
    for (const name of FIXTURES) {
      it(`${name} validates and is returned unchanged (graph, editor keys and run-state keys as given)`, () => {
        const dsl = fixture(name);
        const before = structuredClone(dsl);
        const out = validatePipelineDsl(dsl);
        assert.deepEqual(out, before);
        assert.deepEqual(dsl, before, 'the input is not modified');
      });
    }

    it('cover both Parser layouts, both chunkers, the four Extractor fields and the Compiler', () => {
      assert.ok('pdf' in fixture('enrich_all').components['Parser:Reader']!.obj.params, 'flat per-format settings');
      assert.ok('setups' in fixture('compiled').components['Parser:Reader']!.obj.params, 'settings under setups');
      assert.equal(fixture('by_headings').components['TitleChunker:Sections']!.obj.component_name, 'TitleChunker');
      const fields = Object.values(fixture('enrich_all').components)
        .filter((c) => c.obj.component_name === 'Extractor')
        .map((c) => c.obj.params.field_name);
      assert.deepEqual(fields, ['summary', 'keywords', 'questions', 'metadata']);
      assert.equal(fixture('compiled').components['Compiler:Build']!.obj.params.compilation_template_group_id, '');
    });
  });

  describe('shape', () => {
    it('the DSL must be an object with components', () => {
      rejects([], 'dsl must be an object');
      rejects({}, "dsl.components is required");
      rejects({ components: [] }, 'dsl.components must be an object');
    });

    it('a component without obj.component_name names its id', () => {
      const dsl = tokenizer({});
      (dsl.components['Tokenizer:Index'] as any).obj = { params: {} };
      rejects(dsl, "Component 'Tokenizer:Index': 'obj.component_name' is required");
    });
  });

  describe('the entry is File', () => {
    it("no component with id 'File' is refused (an agent canvas gets this message)", () => {
      const err = rejects({ components: { begin: { obj: { component_name: 'Begin', params: {} }, downstream: [], upstream: [] } } }, /has no 'File' component: a pipeline starts at the File component, whose id must be 'File'/);
      assert.equal(err.componentId, 'File');
    });

    it("the component with id 'File' must be a File", () => {
      const dsl = tokenizer({});
      dsl.components.File!.obj.component_name = 'Parser';
      rejects(dsl, "Component 'File' (Parser): the component with id 'File' must be a File");
    });

    it('a second File component is refused', () => {
      const dsl = tokenizer({});
      dsl.components['File:Other'] = { obj: { component_name: 'File', params: {} }, downstream: [], upstream: [] };
      rejects(dsl, "Component 'File:Other' (File): a pipeline has one File component, with id 'File'");
    });

    it('File has no upstream', () => {
      const dsl = tokenizer({});
      dsl.components.File!.upstream = ['Tokenizer:Index'];
      const err = rejects(dsl, "Component 'File' (File): field 'upstream' must be empty: a pipeline starts at File");
      assert.equal(err.param, 'upstream');
    });
  });

  describe('components', () => {
    it('an unknown component names its id and lists the pipeline components', () => {
      const err = rejects(pipeline('Frob:1', 'Frobnicate', {}), /^Component 'Frob:1': unknown component 'Frobnicate': a pipeline's components are File, Parser, TokenChunker, TitleChunker, Extractor, Tokenizer, Compiler \(old names: Splitter, HierarchicalMerger\)$/);
      assert.equal(err.componentId, 'Frob:1');
    });

    it('an agent component is not a pipeline component', () => {
      rejects(pipeline('LLM:1', 'LLM', {}), /^Component 'LLM:1': 'LLM' is an agent component, not a pipeline component: /);
    });

    it("old names are RAGFlow's migration's: Splitter is a TokenChunker, HierarchicalMerger a TitleChunker", () => {
      assert.equal(pipelineComponentName('Splitter'), 'TokenChunker');
      assert.equal(pipelineComponentName('HierarchicalMerger'), 'TitleChunker');
      assert.equal(pipelineComponentName('PDFGenerator'), undefined, 'an agent rename, not a pipeline one');
      passes(pipeline('Splitter:Old', 'Splitter', { chunk_token_size: 256, delimiters: ['\n'] }));
      passes(pipeline('HierarchicalMerger:Old', 'HierarchicalMerger', { method: 'group', levels: [['^#']] }));
      const err = rejects(pipeline('Splitter:Old', 'Splitter', { chunk_token_size: 0 }), "Component 'Splitter:Old' (Splitter, now TokenChunker): param 'chunk_token_size' must be >= 1");
      assert.equal(err.param, 'chunk_token_size');
      rejects(pipeline('HierarchicalMerger:Old', 'HierarchicalMerger', { levels: [] }), "Component 'HierarchicalMerger:Old' (HierarchicalMerger, now TitleChunker): param 'method' is required");
    });

    it('the common params are checked too', () => {
      rejects(tokenizer({ max_retries: -1 }), "Component 'Tokenizer:Index' (Tokenizer): param 'max_retries' must be >= 0");
      rejects(tokenizer({ persist_logs: 'yes' }), "Component 'Tokenizer:Index' (Tokenizer): param 'persist_logs' must be a boolean");
      passes(tokenizer({ tenant_llm_id: 3, showSomething: true }));
    });
  });

  describe('ids and order', () => {
    it('downstream and upstream must name components of the canvas', () => {
      const down = tokenizer({});
      down.components['Tokenizer:Index']!.downstream = ['Nope'];
      const err = rejects(down, "Component 'Tokenizer:Index' (Tokenizer): field 'downstream' refers to unknown component 'Nope'");
      assert.equal(err.param, 'downstream');
      const up = tokenizer({});
      up.components['Tokenizer:Index']!.upstream = ['Gone'];
      rejects(up, "Component 'Tokenizer:Index' (Tokenizer): field 'upstream' refers to unknown component 'Gone'");
    });

    it('exception_goto must name components', () => {
      rejects(tokenizer({ exception_goto: ['Nowhere'] }), "Component 'Tokenizer:Index' (Tokenizer): param 'exception_goto' refers to unknown component 'Nowhere'");
    });

    it('the steps must not loop', () => {
      const dsl = tokenChunker({});
      dsl.components['Tokenizer:Index']!.downstream = ['TokenChunker:T'];
      rejects(dsl, "Component 'Tokenizer:Index' (Tokenizer): field 'downstream' leads back to 'TokenChunker:T': a pipeline's steps must not loop");
    });

    it('a component not yet connected is kept (the editor saves drafts)', () => {
      const dsl = tokenizer({});
      dsl.components['Parser:Loose'] = { obj: { component_name: 'Parser', params: {} }, downstream: [], upstream: [] };
      passes(dsl);
    });
  });

  describe('Parser', () => {
    it('output formats per file format, under setups or flat', () => {
      passes(parser({ setups: { pdf: { parse_method: 'DeepDOC', output_format: 'markdown' }, spreadsheet: { output_format: 'html' }, email: { output_format: 'text' } } }));
      rejects(parser({ setups: { pdf: { parse_method: 'deepdoc', output_format: 'html' } } }), `Component 'Parser:P' (Parser): param 'setups.pdf.output_format' must be one of "json", "markdown"`);
      rejects(parser({ slides: { output_format: 'markdown' } }), `Component 'Parser:P' (Parser): param 'slides.output_format' must be one of "json"`);
      rejects(parser({ 'text&code': { output_format: 'html' } }), `Component 'Parser:P' (Parser): param '["text&code"].output_format' must be one of "text", "json"`);
      rejects(parser({ setups: { docx: { output_format: 'text' } } }), /param 'setups\.docx\.output_format' must be one of "json", "markdown"/);
      rejects(parser({ setups: { html: { output_format: 'markdown' } } }), /param 'setups\.html\.output_format' must be one of "text", "json"/);
    });

    it('a PDF parsed by a vision model (a parse_method outside the built-in ones, any case) needs lang', () => {
      passes(parser({ setups: { pdf: { parse_method: 'MinerU' } } }));
      passes(parser({ setups: { pdf: { parse_method: 'Mistral OCR' } } }));
      const err = rejects(parser({ setups: { pdf: { parse_method: 'qwen-vl@Tongyi' } } }), "Component 'Parser:P' (Parser): param 'setups.pdf.lang' is required");
      assert.equal(err.param, 'setups.pdf.lang');
      rejects(parser({ pdf: { parse_method: 'qwen-vl@Tongyi', lang: '' } }), "Component 'Parser:P' (Parser): param 'pdf.lang' must not be empty");
      passes(parser({ setups: { pdf: { parse_method: 'qwen-vl@Tongyi', lang: 'English' } } }));
      rejects(parser({ setups: { pdf: { parse_method: '' } } }), "Component 'Parser:P' (Parser): param 'setups.pdf.parse_method' must not be empty");
    });

    it('an image not parsed by OCR needs lang; audio and video need a model', () => {
      rejects(parser({ setups: { image: { parse_method: 'gpt-4o@OpenAI' } } }), "Component 'Parser:P' (Parser): param 'setups.image.lang' is required");
      passes(parser({ setups: { image: { parse_method: 'ocr', output_format: 'text' } } }));
      rejects(parser({ setups: { audio: {} } }), "Component 'Parser:P' (Parser): param 'setups.audio.vlm' is required");
      rejects(parser({ setups: { video: { vlm: { llm_id: '' } } } }), "Component 'Parser:P' (Parser): param 'setups.video.vlm.llm_id' must not be empty");
    });

    it('e-mail fields and suffixes are checked', () => {
      rejects(parser({ setups: { email: { fields: ['from', 'signature'] } } }), /param 'setups\.email\.fields\[1\]' must be one of "from", "to"/);
      rejects(parser({ setups: { pdf: { suffix: 'pdf' } } }), "Component 'Parser:P' (Parser): param 'setups.pdf.suffix' must be an array");
      rejects(parser({ setups: { docx: { flatten_media_to_text: 'no' } } }), "Component 'Parser:P' (Parser): param 'setups.docx.flatten_media_to_text' must be a boolean");
    });
  });

  describe('TokenChunker', () => {
    it('delimiter_mode delimiter or one; the old token_size is accepted', () => {
      passes(tokenChunker({ delimiter_mode: 'one' }));
      passes(tokenChunker({ delimiter_mode: 'token_size' }));
      rejects(tokenChunker({ delimiter_mode: 'words' }), `Component 'TokenChunker:T' (TokenChunker): param 'delimiter_mode' must be one of "delimiter", "one", "token_size"`);
    });

    it('chunk_token_size a positive integer; overlapped_percent in [0, 1]; context sizes >= 0', () => {
      rejects(tokenChunker({ chunk_token_size: 0 }), "Component 'TokenChunker:T' (TokenChunker): param 'chunk_token_size' must be >= 1");
      rejects(tokenChunker({ chunk_token_size: 12.5 }), "Component 'TokenChunker:T' (TokenChunker): param 'chunk_token_size' must be an integer");
      rejects(tokenChunker({ overlapped_percent: 1.5 }), "Component 'TokenChunker:T' (TokenChunker): param 'overlapped_percent' must be <= 1");
      rejects(tokenChunker({ table_context_size: -1 }), "Component 'TokenChunker:T' (TokenChunker): param 'table_context_size' must be >= 0");
      passes(tokenChunker({ overlapped_percent: 0.2, image_context_size: 64 }));
    });

    it('delimiters: a list, one string or null', () => {
      passes(tokenChunker({ delimiters: '\n', children_delimiters: null }));
      rejects(tokenChunker({ delimiters: [1] }), "Component 'TokenChunker:T' (TokenChunker): param 'delimiters[0]' must be a string");
    });
  });

  describe('TitleChunker', () => {
    it('method and levels are required; hierarchy with method hierarchy', () => {
      rejects(pipeline('TitleChunker:H', 'TitleChunker', { levels: [['^#']] }), "Component 'TitleChunker:H' (TitleChunker): param 'method' is required");
      rejects(titleChunker({ method: 'flat' }), `Component 'TitleChunker:H' (TitleChunker): param 'method' must be one of "hierarchy", "group"`);
      rejects(titleChunker({ levels: [] }), "Component 'TitleChunker:H' (TitleChunker): param 'levels' must not be empty");
      rejects(pipeline('TitleChunker:H', 'TitleChunker', { method: 'hierarchy', levels: [['^#']] }), "Component 'TitleChunker:H' (TitleChunker): param 'hierarchy' is required");
      rejects(titleChunker({ hierarchy: 0 }), "Component 'TitleChunker:H' (TitleChunker): param 'hierarchy' must be >= 1");
      passes(pipeline('TitleChunker:H', 'TitleChunker', { method: 'group', levels: [['^#']], hierarchy: null }));
    });

    it('chunk_token_cap: 0 or null (no cap), or 128..8000', () => {
      passes(titleChunker({ chunk_token_cap: 0 }));
      passes(titleChunker({ chunk_token_cap: null }));
      passes(titleChunker({ chunk_token_cap: 1024 }));
      const message = "Component 'TitleChunker:H' (TitleChunker): param 'chunk_token_cap' must be 0, null (no cap) or an integer between 128 and 8000";
      rejects(titleChunker({ chunk_token_cap: 100 }), message);
      rejects(titleChunker({ chunk_token_cap: 9000 }), message);
      rejects(titleChunker({ chunk_token_cap: '512' }), message);
    });
  });

  describe('Extractor', () => {
    it('field_name is required and not empty', () => {
      rejects(pipeline('Extractor:E', 'Extractor', {}), "Component 'Extractor:E' (Extractor): param 'field_name' is required");
      rejects(extractor({ field_name: '' }), "Component 'Extractor:E' (Extractor): param 'field_name' must not be empty");
      passes(extractor({ field_name: 'toc' }));
    });

    it("the model settings and prompts are the LLM component's", () => {
      rejects(extractor({ temperature: 3 }), /^Component 'Extractor:E' \(Extractor\): param 'temperature' must be <= 2$/);
      rejects(extractor({ prompts: [] }), "Component 'Extractor:E' (Extractor): param 'prompts' must not be empty");
      rejects(extractor({ prompts: [{ role: 'robot', content: 'x' }] }), /param 'prompts\[0\]\.role' must be one of "user", "assistant", "system"/);
      passes(extractor({ temperature: '0.1', llm_id: '', tenant_llm_id: 63 }));
    });
  });

  describe('Tokenizer', () => {
    it('search_method: full_text and/or embedding, any case', () => {
      passes(tokenizer({ search_method: ['FULL_TEXT', 'Embedding'] }));
      const err = rejects(tokenizer({ search_method: ['embedding', 'vector'] }), `Component 'Tokenizer:Index' (Tokenizer): param 'search_method[1]' must be "full_text" or "embedding"`);
      assert.equal(err.param, 'search_method[1]');
      rejects(tokenizer({ search_method: 'embedding' }), "Component 'Tokenizer:Index' (Tokenizer): param 'search_method' must be an array");
    });

    it('filename_embd_weight in [0, 1] (numeric text too); fields one name or a list', () => {
      passes(tokenizer({ filename_embd_weight: '0.3', fields: ['text', 'questions'] }));
      rejects(tokenizer({ filename_embd_weight: 2 }), "Component 'Tokenizer:Index' (Tokenizer): param 'filename_embd_weight' must be <= 1");
      rejects(tokenizer({ filename_embd_weight: 'heavy' }), "Component 'Tokenizer:Index' (Tokenizer): param 'filename_embd_weight' must be a number between 0 and 1");
      rejects(tokenizer({ fields: '' }), "Component 'Tokenizer:Index' (Tokenizer): param 'fields' must not be empty");
      rejects(tokenizer({ fields: [3] }), "Component 'Tokenizer:Index' (Tokenizer): param 'fields[0]' must be a string");
    });
  });

  describe('Compiler', () => {
    it('the template group may be empty when saved; the legacy list and plan are typed', () => {
      passes(pipeline('Compiler:C', 'Compiler', { compilation_template_group_id: '', plan: false }));
      passes(pipeline('Compiler:C', 'Compiler', { compilation_template_group_ids: ['g1', 'g2'] }));
      rejects(pipeline('Compiler:C', 'Compiler', { compilation_template_group_id: 7 }), "Component 'Compiler:C' (Compiler): param 'compilation_template_group_id' must be a string");
      rejects(pipeline('Compiler:C', 'Compiler', { compilation_template_group_ids: [1] }), "Component 'Compiler:C' (Compiler): param 'compilation_template_group_ids[0]' must be a string");
      rejects(pipeline('Compiler:C', 'Compiler', { plan: 'yes' }), "Component 'Compiler:C' (Compiler): param 'plan' must be a boolean");
    });
  });
});
