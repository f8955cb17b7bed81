import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { McpBackend } from './backend.js';
import { VERSION } from '../api/routers/system.js';
import { chatSummary, datasetSummary, renderChunks, retrievedChunk } from './results.js';

const MAX_PAGE_SIZE = 100;
const unit = () => z.number().min(0).max(1);

const listInput = {
  page: z.number().int().min(1).default(1).describe('1-based page number'),
  page_size: z.number().int().min(1).max(MAX_PAGE_SIZE).default(30).describe(`Items per page (at most ${MAX_PAGE_SIZE})`),
  name: z.string().optional().describe('Only those whose name contains this text (case-insensitive)'),
};
const listOutput = { total: z.number().describe('All matches, across pages'), page: z.number(), page_size: z.number() };

const datasetOutput = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  document_count: z.number(),
  chunk_count: z.number(),
  embedding_model: z.string(),
  chunk_method: z.string(),
});
const chatOutput = z.object({ id: z.string(), name: z.string(), dataset_ids: z.array(z.string()), llm_id: z.string().nullable() });
const chunkOutput = z.object({
  id: z.string(),
  content: z.string(),
  document_id: z.string(),
  document_name: z.string(),
  dataset_id: z.string(),
  similarity: z.number(),
});

const readOnly = { readOnlyHint: true, openWorldHint: false };

/** An MCP server with Cairn's tools over `backend`. Errors thrown by a tool become tool errors (isError) carrying the message. */
export function createMcpServer(backend: McpBackend): McpServer {
  const server = new McpServer({ name: 'cairn', version: VERSION });

  server.registerTool(
    'list_datasets',
    {
      title: 'List datasets',
      description: "Lists the caller's datasets (knowledge bases) with their document and chunk counts, newest first.",
      inputSchema: listInput,
      outputSchema: { ...listOutput, datasets: z.array(datasetOutput) },
      annotations: readOnly,
    },
    async ({ page, page_size, name }) => {
      const { total, datasets } = await backend.listDatasets({ page, page_size, keywords: name });
      return result({ total, page, page_size, datasets: datasets.map(datasetSummary) });
    },
  );

  server.registerTool(
    'list_chat_assistants',
    {
      title: 'List chat assistants',
      description: "Lists the caller's chat assistants with the datasets they answer from and their chat model, newest first.",
      inputSchema: listInput,
      outputSchema: { ...listOutput, chat_assistants: z.array(chatOutput) },
      annotations: readOnly,
    },
    async ({ page, page_size, name }) => {
      const { total, chats } = await backend.listChats({ page, page_size, keywords: name });
      return result({ total, page, page_size, chat_assistants: chats.map(chatSummary) });
    },
  );

  server.registerTool(
    'retrieve',
    {
      title: 'Retrieve chunks',
      description:
        'Finds the chunks of the caller\'s documents most relevant to a question (hybrid full-text and vector search), ' +
        'most similar first. Searches the given datasets, or all of the caller\'s datasets when none are given.',
      inputSchema: {
        question: z.string().trim().min(1).describe('What to search for'),
        dataset_ids: z.array(z.string()).optional().describe("Datasets to search (default: all of the caller's datasets; they must share one embedding model)"),
        document_ids: z.array(z.string()).optional().describe('Only search these documents (they must belong to the datasets)'),
        top_k: z.number().int().min(1).max(10000).optional().describe('Candidates taken from each of full-text and vector search (default 1024)'),
        page_size: z.number().int().min(1).max(MAX_PAGE_SIZE).optional().describe('Chunks returned (default 30)'),
        similarity_threshold: unit().optional().describe('Minimum similarity, 0..1 (default 0.2)'),
        vector_similarity_weight: unit().optional().describe('Weight of vector similarity against term similarity, 0..1 (default 0.3)'),
      },
      outputSchema: { total: z.number().describe('Chunks at or above the threshold, across pages'), dataset_ids: z.array(z.string()), chunks: z.array(chunkOutput) },
      annotations: readOnly,
    },
    async ({ dataset_ids, ...input }) => {
      const ids = dataset_ids?.length ? dataset_ids : await allDatasetIds(backend);
      if (ids.length === 0) throw new Error('There are no datasets to search: create a dataset and upload documents first');
      const { total, chunks } = await backend.retrieve({ ...input, dataset_ids: ids });
      const structured = { total, dataset_ids: ids, chunks: chunks.map(retrievedChunk) };
      return {
        content: [
          { type: 'text', text: renderChunks(input.question, structured) },
          { type: 'text', text: JSON.stringify(structured) },
        ],
        structuredContent: structured,
      };
    },
  );

  return server;
}

/** Structured content, also serialized as text for clients that read only `content`. */
function result(structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

async function allDatasetIds(backend: McpBackend): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; ; page++) {
    const { total, datasets } = await backend.listDatasets({ page, page_size: MAX_PAGE_SIZE });
    ids.push(...datasets.map((d) => d.id));
    if (datasets.length < MAX_PAGE_SIZE || ids.length >= total) return ids;
  }
}
