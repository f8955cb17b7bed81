import { route, type RouteSpec } from '../routes.js';
import { envelopeOrStream } from '../openapi.js';
import { LIMITS, list, listQuery, nullableText, queryList, text } from '../schemas.js';
import { metaDataFilter } from './retrieval.js';
import { MAX_TOP_K } from '../../services/retrieval.js';
import type { SearchAppService } from '../../services/searches.js';
import { MessageFrames } from '../../chat/message-frames.js';
import { streamMessages } from '../../chat/sse.js';

const unit = { type: 'number', minimum: 0, maximum: 1 };

/** RAGFlow's search_config: the keys Cairn acts on are checked; other keys (UI switches) are kept as given. */
const searchConfig = {
  type: 'object',
  properties: {
    kb_ids: list(text(LIMITS.id, 1), 100),
    doc_ids: list(text(LIMITS.id, 1), LIMITS.ids),
    similarity_threshold: unit,
    vector_similarity_weight: unit,
    top_k: { type: 'integer', minimum: 1, maximum: MAX_TOP_K },
    use_kg: { type: 'boolean' },
    rerank_id: { type: 'string', maxLength: 255 },
    chat_id: { type: 'string', maxLength: 255 },
    llm_setting: {
      type: 'object',
      properties: {
        temperature: { type: 'number', minimum: 0, maximum: 2 },
        top_p: unit,
        presence_penalty: { type: 'number', minimum: -2, maximum: 2 },
        frequency_penalty: { type: 'number', minimum: -2, maximum: 2 },
        max_token: { type: 'integer', minimum: 1, maximum: LIMITS.tokens },
      },
    },
    cross_languages: list(text(64, 1), 32),
    keyword: { type: 'boolean' },
    highlight: { type: 'boolean' },
    meta_data_filter: metaDataFilter,
  },
};

const appProperties = {
  name: text(1024),
  description: nullableText(65535),
  avatar: nullableText(65535),
  search_config: searchConfig,
};

const listSearchesQuery = listQuery(['create_time', 'update_time', 'name'], { keywords: text(LIMITS.queryText), owner_ids: queryList });

const completionBody = {
  type: 'object',
  required: ['question'],
  properties: { question: text(LIMITS.text, 1), kb_ids: list(text(LIMITS.id, 1), 100) },
};

const ANSWER_RESPONSES = envelopeOrStream('Server-sent events: one conversation Message per frame (the answer so far; the last one carries the reference), then `data:{"code":0,"message":"","data":true}`');

export function searchRoutes(searches: SearchAppService): RouteSpec[] {
  const completion = (path: string, deprecated: boolean) =>
    route({
      method: 'post', path, tag: 'searches', raw: true, admission: 'long', body: completionBody, responses: ANSWER_RESPONSES, deprecated,
      summary: "Answer a question with a search app's datasets, settings and chat model (SSE)",
      handler: async ({ principal, params, body, res }) => {
        const turn = await searches.ask(principal, params.search_id, body.question, body.kb_ids);
        await streamMessages(res, turn, new MessageFrames(turn.ids, false));
      },
    });
  return [
    route({
      method: 'post', path: '/searches', tag: 'searches', summary: 'Create a search app ({search_id}); a taken name gets a (1) suffix',
      body: { type: 'object', required: ['name'], properties: appProperties },
      handler: ({ principal, body }) => searches.create(principal, body),
    }),
    route({
      method: 'get', path: '/searches', tag: 'searches', summary: 'List search apps ({search_apps, total})', query: listSearchesQuery,
      handler: ({ principal, query }) => searches.list(principal, query),
    }),
    route({
      method: 'get', path: '/searches/:search_id', tag: 'searches', summary: 'Get a search app with its search_config',
      handler: ({ principal, params }) => searches.detail(principal, params.search_id),
    }),
    route({
      method: 'put', path: '/searches/:search_id', tag: 'searches', summary: 'Update a search app: name, and search_config merged into the saved one',
      body: { type: 'object', required: ['name', 'search_config'], properties: appProperties },
      handler: ({ principal, params, body }) => searches.update(principal, params.search_id, body),
    }),
    route({
      method: 'delete', path: '/searches/:search_id', tag: 'searches', summary: 'Delete a search app',
      handler: ({ principal, params }) => searches.delete(principal, params.search_id),
    }),
    completion('/searches/:search_id/completions', false),
    completion('/searches/:search_id/completion', true),
  ];
}
