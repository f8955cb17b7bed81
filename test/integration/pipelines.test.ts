import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { newUser, type Api } from './client.js';
import { createAgent, messageCanvas } from './agent-helpers.js';

/** A fixture in RAGFlow's pipeline template format: the wrapper's title and DSL, or a bare DSL. */
function template(name: string): { title: string; description: string | null; dsl: Record<string, any> } {
  const json = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'pipelines', `${name}.json`), 'utf8'));
  if (json.dsl) return { title: json.title.en, description: json.description.en, dsl: json.dsl };
  return { title: 'Compiled', description: null, dsl: json };
}

function assertError(res: { status: number; body: any }, status: number, message: RegExp) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.code, status);
  assert.match(res.body.message, message);
}

const FIXTURES = ['enrich_all', 'summarized_chunks', 'by_headings', 'compiled'];

describe('pipelines over HTTP: dataflow canvases on the agents routes', function () {
  this.timeout(60_000);
  let api: Api;
  const tag = `pl-${process.pid}-${Date.now()}`;
  const created = new Map<string, string>();
  let agentId: string;

  before(async () => {
    ({ api } = await newUser('pipelines'));
    agentId = await createAgent(api, messageCanvas('hello'), `${tag} agent`);
  });

  describe('create, export, versions', () => {
    for (const name of FIXTURES) {
      it(`${name}: created with canvas_category dataflow_canvas; the answer, GET and the saved version hold the DSL unchanged`, async () => {
        const { title, description, dsl } = template(name);
        const res = await api.post('/agents', { title: `${tag} ${title}`, description, canvas_type: 'Ingestion Pipeline', canvas_category: 'dataflow_canvas', dsl });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const pipeline = res.body.data;
        created.set(name, pipeline.id);
        assert.equal(pipeline.canvas_category, 'dataflow_canvas');
        assert.equal(pipeline.canvas_type, 'Ingestion Pipeline');
        assert.deepEqual(pipeline.dsl, dsl, 'nothing is filled in or dropped');

        const got = await api.get(`/agents/${pipeline.id}`);
        assert.equal(got.status, 200, JSON.stringify(got.body));
        assert.deepEqual(got.body.data.dsl, dsl);
        assert.equal(got.body.data.canvas_category, 'dataflow_canvas');

        const versions = await api.get(`/agents/${pipeline.id}/versions`);
        assert.equal(versions.body.data.length, 1);
        assert.deepEqual(versions.body.data[0].dsl, dsl);
        const version = await api.get(`/agents/${pipeline.id}/versions/${versions.body.data[0].id}`);
        assert.deepEqual(version.body.data.dsl, dsl);
      });
    }

    it('an exported pipeline imports again unchanged (as a new pipeline)', async () => {
      const exported = (await api.get(`/agents/${created.get('enrich_all')}`)).body.data;
      const res = await api.post('/agents', { title: `${tag} reimported`, canvas_category: exported.canvas_category, dsl: exported.dsl });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.data.dsl, template('enrich_all').dsl);
    });

    it("old component names (RAGFlow's Splitter, HierarchicalMerger) are accepted and kept as given", async () => {
      const dsl = structuredClone(template('summarized_chunks').dsl);
      dsl.components['TokenChunker:Slicer'].obj.component_name = 'Splitter';
      const res = await api.post('/agents', { title: `${tag} old names`, canvas_category: 'dataflow_canvas', dsl });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.dsl.components['TokenChunker:Slicer'].obj.component_name, 'Splitter');
      const headings = structuredClone(template('by_headings').dsl);
      headings.components['TitleChunker:Sections'].obj.component_name = 'HierarchicalMerger';
      const merger = await api.post('/agents', { title: `${tag} old merger`, canvas_category: 'dataflow_canvas', dsl: headings });
      assert.equal(merger.status, 200, JSON.stringify(merger.body));
      assert.deepEqual(merger.body.data.dsl, headings);
      headings.components['TitleChunker:Sections'].obj.params.hierarchy = 0;
      assertError(
        await api.post('/agents', { title: `${tag} bad merger`, canvas_category: 'dataflow_canvas', dsl: headings }),
        400,
        /Component 'TitleChunker:Sections' \(HierarchicalMerger, now TitleChunker\): param 'hierarchy' must be >= 1/,
      );
    });
  });

  describe('list', () => {
    const listed = async (query: Record<string, unknown>) => {
      const res = await api.get('/agents', { keywords: tag, page_size: 100, ...query });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data.canvas.map((c: any) => c.id) as string[];
    };

    it('canvas_category filters as in RAGFlow: one category, several comma-separated, or none (all)', async () => {
      const pipelines = [...created.values()];
      const onlyPipelines = await listed({ canvas_category: 'dataflow_canvas' });
      for (const id of pipelines) assert.ok(onlyPipelines.includes(id), 'every pipeline is listed');
      assert.ok(!onlyPipelines.includes(agentId), 'no agent among the pipelines');
      const onlyAgents = await listed({ canvas_category: 'agent_canvas' });
      assert.deepEqual(onlyAgents, [agentId]);
      const both = await listed({ canvas_category: 'agent_canvas,dataflow_canvas' });
      const all = await listed({});
      assert.deepEqual([...both].sort(), [...all].sort());
      assert.ok(all.includes(agentId) && pipelines.every((id) => all.includes(id)));
      assert.deepEqual(await listed({ canvas_category: 'compilation_template_group' }), [], 'a category Cairn has none of lists nothing');
    });

    it('listed pipelines carry their DSL unchanged', async () => {
      const res = await api.get('/agents', { keywords: tag, canvas_category: 'dataflow_canvas', page_size: 100 });
      const listedById = new Map(res.body.data.canvas.map((c: any) => [c.id, c]));
      for (const [name, id] of created) assert.deepEqual((listedById.get(id) as any).dsl, template(name).dsl);
    });
  });

  describe('validation', () => {
    it('an invalid pipeline is a 400 naming the component and the param', async () => {
      const dsl = structuredClone(template('summarized_chunks').dsl);
      dsl.components['TokenChunker:Slicer'].obj.params.chunk_token_size = 0;
      assertError(
        await api.post('/agents', { title: `${tag} bad`, canvas_category: 'dataflow_canvas', dsl }),
        400,
        /^Invalid DSL: Component 'TokenChunker:Slicer' \(TokenChunker\): param 'chunk_token_size' must be >= 1$/,
      );
      const parser = structuredClone(template('compiled').dsl);
      parser.components['Parser:Reader'].obj.params.setups.pdf.output_format = 'html';
      assertError(
        await api.post('/agents', { title: `${tag} bad parser`, canvas_category: 'dataflow_canvas', dsl: parser }),
        400,
        /Component 'Parser:Reader' \(Parser\): param 'setups\.pdf\.output_format' must be one of "json", "markdown"/,
      );
    });

    it('each canvas is validated as its category: an agent is not a pipeline, a pipeline is not an agent', async () => {
      assertError(await api.post('/agents', { title: `${tag} agent as pipeline`, canvas_category: 'dataflow_canvas', dsl: messageCanvas('x') }), 400, /has no 'File' component/);
      assertError(await api.post('/agents', { title: `${tag} pipeline as agent`, dsl: template('compiled').dsl }), 400, /has no 'begin' component/);
      assertError(await api.post('/agents', { title: `${tag} unknown category`, canvas_category: 'workflow', dsl: template('compiled').dsl }), 400, /canvas_category/);
    });

    it('update validates as a pipeline and saves a version; the category cannot change', async () => {
      const id = created.get('by_headings')!;
      const dsl = structuredClone(template('by_headings').dsl);
      dsl.components['TitleChunker:Sections'].obj.params.hierarchy = 3;
      const ok = await api.put(`/agents/${id}`, { dsl });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.deepEqual((await api.get(`/agents/${id}`)).body.data.dsl, dsl);
      assert.equal((await api.get(`/agents/${id}/versions`)).body.data.length, 2);

      dsl.components['TitleChunker:Sections'].obj.params.method = 'flat';
      assertError(await api.put(`/agents/${id}`, { dsl }), 400, /Component 'TitleChunker:Sections' \(TitleChunker\): param 'method' must be one of "hierarchy", "group"/);
      assertError(await api.put(`/agents/${id}`, { canvas_category: 'agent_canvas' }), 400, /canvas_category cannot change/);
      assert.equal((await api.get(`/agents/${id}`)).body.data.canvas_category, 'dataflow_canvas');
    });
  });

  describe('a pipeline does not run as an agent', () => {
    it('completions, sessions and the OpenAI route are a 400 saying pipelines run on documents', async () => {
      const id = created.get('summarized_chunks')!;
      const runsOnDocuments = /ingestion pipeline \(canvas_category dataflow_canvas\): pipelines run on documents/;
      assertError(await api.post('/agents/chat/completions', { agent_id: id, query: 'hi', stream: false }), 400, runsOnDocuments);
      assertError(await api.post(`/agents/${id}/completions`, { query: 'hi', stream: false }), 400, runsOnDocuments);
      assertError(await api.post(`/agents/${id}/sessions`, {}), 400, runsOnDocuments);
      const openai = await api.post(`/agents_openai/${id}/chat/completions`, { messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(openai.status, 400, JSON.stringify(openai.body));
      assert.match(openai.body.error.message, runsOnDocuments);
    });

    it('agents still run', async () => {
      const res = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'hi', stream: false });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.data.content, 'hello');
    });
  });
});
