import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { harness } from './harness.js';
import { Api, newUser } from './client.js';
import { upload, waitForRun } from './documents-helpers.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PHRASE = 'The basalt lighthouse at Kestrel Point is painted ochre every spring';
const NOTES = [
  'Harbour notes.',
  `${PHRASE}, after the winter storms have passed and the scaffolding can be raised safely.`,
  'Fishing boats leave the harbour before dawn and return with the tide in the late afternoon.',
].join('\n\n');

type Connect = (key: string) => Transport;

const transports: Record<string, (url: string) => Connect> = {
  'Streamable HTTP': (url) => (key) => new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
  stdio: (url) => (key) =>
    new StdioClientTransport({
      command: process.execPath,
      args: ['bin/cairn.js', 'mcp'],
      cwd: ROOT,
      env: { ...stringEnv(), CAIRN_URL: url, CAIRN_API_KEY: key },
      stderr: 'pipe',
    }),
};

describe('MCP server', function () {
  this.timeout(180_000);
  let url: string;
  let owner: { api: Api };
  let other: { api: Api };
  let notesId: string;
  let emptyId: string;
  let foreignId: string;
  let chatId: string;
  let foreignChatId: string;

  before(async () => {
    url = (await harness()).url;
    owner = await newUser('mcp');
    other = await newUser('mcp-other');
    notesId = await parsedDataset(owner.api, 'mcp-notes', { 'notes.txt': NOTES });
    emptyId = (await owner.api.post('/datasets', { name: 'mcp-empty' })).body.data.id;
    foreignId = await parsedDataset(other.api, 'mcp-foreign', { 'foreign.txt': NOTES });
    chatId = (await owner.api.post('/chats', { name: 'mcp-harbour', dataset_ids: [notesId] })).body.data.id;
    foreignChatId = (await other.api.post('/chats', { name: 'mcp-foreign-chat', dataset_ids: [foreignId] })).body.data.id;
  });

  for (const [name, transport] of Object.entries(transports)) {
    describe(`over ${name}`, () => {
      let client: Client;

      before(async () => {
        client = new Client({ name: 'cairn-test', version: '1.0.0' });
        await client.connect(transport(url)(owner.api.key!));
      });
      after(async () => {
        await client?.close();
      });

      it('lists the three tools with their input schemas', async () => {
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((t) => t.name).sort(), ['list_chat_assistants', 'list_datasets', 'retrieve']);
        const retrieve = tools.find((t) => t.name === 'retrieve')!;
        assert.deepEqual(retrieve.inputSchema.required, ['question']);
        for (const tool of tools) assert.ok(tool.description && tool.outputSchema, `${tool.name} has a description and an output schema`);
      });

      it("list_datasets returns exactly the caller's datasets", async () => {
        const result = await call(client, 'list_datasets', {});
        assert.deepEqual(result.datasets.map((d: any) => d.id).sort(), [emptyId, notesId].sort());
        assert.equal(result.total, 2);
        const notes = result.datasets.find((d: any) => d.id === notesId);
        assert.equal(notes.name, 'mcp-notes');
        assert.equal(notes.document_count, 1);
        assert.ok(notes.chunk_count > 0);
        assert.equal(notes.chunk_method, 'naive');
        assert.ok(notes.embedding_model);
        assert.ok(!result.datasets.some((d: any) => d.id === foreignId));
      });

      it('list_datasets filters by name and pages', async () => {
        const byName = await call(client, 'list_datasets', { name: 'NOTES' });
        assert.deepEqual(byName.datasets.map((d: any) => d.id), [notesId]);
        const page2 = await call(client, 'list_datasets', { page: 2, page_size: 1 });
        assert.equal(page2.total, 2);
        assert.equal(page2.datasets.length, 1);
      });

      it("list_chat_assistants returns the caller's chats", async () => {
        const result = await call(client, 'list_chat_assistants', {});
        assert.deepEqual(result.chat_assistants.map((c: any) => c.id), [chatId]);
        assert.deepEqual(result.chat_assistants[0].dataset_ids, [notesId]);
        assert.equal(result.chat_assistants[0].name, 'mcp-harbour');
        assert.ok('llm_id' in result.chat_assistants[0]);
        assert.ok(!result.chat_assistants.some((c: any) => c.id === foreignChatId));
      });

      it('retrieve finds a chunk of a parsed document, with a readable rendering', async () => {
        const res = await client.callTool({ name: 'retrieve', arguments: { question: 'basalt lighthouse Kestrel Point', dataset_ids: [notesId] } });
        assert.ok(!res.isError, JSON.stringify(res.content));
        const result = res.structuredContent as any;
        assert.ok(result.total >= 1);
        const top = result.chunks[0];
        assert.match(top.content, new RegExp(PHRASE));
        assert.equal(top.document_name, 'notes.txt');
        assert.equal(top.dataset_id, notesId);
        assert.ok(top.similarity > 0 && top.similarity <= 1);
        const [rendering, json] = res.content as { type: string; text: string }[];
        assert.match(rendering.text, /\[1\] notes\.txt — similarity/);
        assert.match(rendering.text, new RegExp(PHRASE));
        assert.deepEqual(JSON.parse(json.text), result);
      });

      it("retrieve searches all of the caller's datasets when none are given", async () => {
        const result = await call(client, 'retrieve', { question: 'basalt lighthouse ochre' });
        assert.deepEqual(result.dataset_ids.sort(), [emptyId, notesId].sort());
        assert.ok(result.chunks.length >= 1);
        assert.ok(result.chunks.every((c: any) => c.dataset_id === notesId));
      });

      it("retrieve on another tenant's dataset is a tool error", async () => {
        const res = await client.callTool({ name: 'retrieve', arguments: { question: 'lighthouse', dataset_ids: [foreignId] } });
        assert.equal(res.isError, true);
        assert.match(text(res), new RegExp(`Dataset '${foreignId}' not found`));
      });

      it('invalid arguments are a tool error naming the problem', async () => {
        const res = await client.callTool({ name: 'retrieve', arguments: { dataset_ids: [notesId] } });
        assert.equal(res.isError, true);
        assert.match(text(res), /question/);
        const big = await client.callTool({ name: 'list_datasets', arguments: { page_size: 1000 } });
        assert.equal(big.isError, true);
        assert.match(text(big), /page_size/);
      });
    });
  }

  describe('HTTP endpoint', () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } };
    const post = (headers: Record<string, string>, body: string = JSON.stringify(initialize)) =>
      fetch(new URL('/mcp', url), { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers }, body });

    it('answers 401 JSON without a key or with an invalid one', async () => {
      for (const headers of [{}, { Authorization: 'Bearer cairn-not-a-key' }] as Record<string, string>[]) {
        const res = await post(headers);
        assert.equal(res.status, 401);
        const body = await res.json();
        assert.equal(body.code, 401);
        assert.match(body.message, /Unauthorized/);
      }
    });

    it('refuses an MCP client with an invalid key', async () => {
      const client = new Client({ name: 'cairn-test', version: '1.0.0' });
      await assert.rejects(client.connect(transports['Streamable HTTP'](url)('cairn-not-a-key')), /401|Unauthorized/);
    });

    it('answers an initialize POST with JSON', async () => {
      const res = await post({ Authorization: `Bearer ${owner.api.key}` });
      assert.equal(res.status, 200);
      const body = await res.json();
      assert.equal(body.result.serverInfo.name, 'cairn');
      assert.ok(body.result.capabilities.tools);
    });

    it('answers GET and DELETE with 405 (stateless: no SSE stream, no sessions)', async () => {
      for (const method of ['GET', 'DELETE']) {
        const res = await fetch(new URL('/mcp', url), { method, headers: { Authorization: `Bearer ${owner.api.key}`, Accept: 'text/event-stream' } });
        assert.equal(res.status, 405);
        assert.equal(res.headers.get('allow'), 'POST');
        assert.equal((await res.json()).error.code, -32000);
      }
    });

    it('answers a body that is not JSON with a JSON-RPC parse error', async () => {
      const res = await post({ Authorization: `Bearer ${owner.api.key}` }, '{not json');
      assert.equal(res.status, 400);
      assert.equal((await res.json()).error.code, -32700);
    });

    it('leaves the API routes as they were', async () => {
      const res = await owner.api.get('/datasets');
      assert.equal(res.status, 200);
      assert.equal((await fetch(new URL('/mcp/extra', url))).status, 404);
    });
  });

  describe('cairn mcp', () => {
    it('exits with a usage error when no API key is given', async () => {
      const env = stringEnv();
      delete env.CAIRN_API_KEY;
      const run = promisify(execFile)(process.execPath, ['bin/cairn.js', 'mcp'], { cwd: ROOT, env: { ...env, CAIRN_URL: url } });
      await assert.rejects(run, (err: { code?: number; stderr?: string }) => {
        assert.equal(err.code, 2);
        assert.match(err.stderr ?? '', /CAIRN_API_KEY/);
        return true;
      });
    });

    it('reports an invalid key as a tool error', async () => {
      const client = new Client({ name: 'cairn-test', version: '1.0.0' });
      await client.connect(transports.stdio(url)('cairn-not-a-key'));
      try {
        const res = await client.callTool({ name: 'list_datasets', arguments: {} });
        assert.equal(res.isError, true);
        assert.match(text(res), /Unauthorized/);
      } finally {
        await client.close();
      }
    });
  });
});

/** Calls a tool that must succeed; returns its structured content after checking the text content carries the same JSON. */
async function call(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const res = await client.callTool({ name, arguments: args });
  assert.ok(!res.isError, `${name} failed: ${text(res)}`);
  assert.deepEqual(JSON.parse((res.content as { text: string }[]).at(-1)!.text), res.structuredContent);
  return res.structuredContent;
}

function text(res: Awaited<ReturnType<Client['callTool']>>): string {
  return (res.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('\n');
}

/** A dataset with the given text files, parsed to DONE; returns its id. */
async function parsedDataset(api: Api, name: string, files: Record<string, string>): Promise<string> {
  const ds = await api.post('/datasets', { name });
  assert.equal(ds.status, 200, JSON.stringify(ds.body));
  const id: string = ds.body.data.id;
  const up = await upload(api, id, Object.entries(files).map(([file, body]) => ({ name: file, bytes: Buffer.from(body) })));
  assert.equal(up.status, 200, JSON.stringify(up.body));
  const docIds: string[] = up.body.data.map((d: { id: string }) => d.id);
  const parse = await api.post(`/datasets/${id}/chunks`, { document_ids: docIds });
  assert.equal(parse.status, 200, JSON.stringify(parse.body));
  for (const doc of docIds) assert.equal((await waitForRun(api, id, doc)).run, 'DONE');
  return id;
}

function stringEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
}
