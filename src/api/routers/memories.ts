import { route, Reply, type RouteSpec } from '../routes.js';
import { parseMessageRef, type MemoryService } from '../../services/memories.js';
import { MAX_MEMORY_SIZE } from '../../memories/types.js';
import { anyValue, LIMITS, nullableText, pagingParams, queryList, text } from '../schemas.js';

/** RAGFlow's memory routes answer `"message": true` next to the data. */
const done = (data: unknown = null) => new Reply(data, { message: true });

const unit = { type: 'number', minimum: 0, maximum: 1 };
/** A list parameter: repeated (`?a=x&a=y`) or comma-separated (`?a=x,y`); split by the service. */
const stringList = queryList;

/**
 * Types and ranges the service checks itself, with RAGFlow's messages (e.g. `Memory type must be a list.`,
 * a name of 128, model ids and avatars of 255 and 65,535 characters): the bounds here are above those.
 */
const memoryFields = {
  name: text(LIMITS.name),
  memory_type: { ...anyValue(64, 16), items: anyValue(64, 16) },
  embd_id: text(1024),
  llm_id: text(1024),
  description: { type: ['string', 'null'], maxLength: 65535 },
  avatar: nullableText(LIMITS.longText),
  permission: text(32),
  permissions: text(32),
  memory_size: { type: 'number' },
  forgetting_policy: text(64),
  temperature: { type: 'number' },
  system_prompt: nullableText(LIMITS.text),
  user_prompt: nullableText(LIMITS.text),
};

const createBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'memory_type', 'embd_id', 'llm_id'],
  properties: memoryFields,
};

const updateBody = { type: 'object', additionalProperties: false, properties: memoryFields };

const listMemoriesQuery = {
  type: 'object',
  properties: {
    ...pagingParams(50),
    orderby: { enum: ['create_time', 'update_time'], default: 'create_time' },
    desc: { type: 'boolean', default: true },
    memory_type: stringList,
    tenant_id: stringList,
    owner_ids: stringList,
    ids: stringList,
    storage_type: text(64),
    keywords: text(LIMITS.queryText),
  },
};

const listMessagesQuery = {
  type: 'object',
  properties: {
    agent_id: stringList,
    keywords: text(LIMITS.queryText),
    ...pagingParams(50),
    include_invalid: { type: 'boolean', default: false },
  },
};

const addMessageBody = {
  type: 'object',
  required: ['memory_id', 'agent_id', 'session_id', 'user_input', 'agent_response'],
  properties: {
    memory_id: { type: ['array', 'string'], items: text(LIMITS.id, 1), minItems: 1, maxItems: 100, minLength: 1, maxLength: LIMITS.queryText },
    agent_id: text(LIMITS.name),
    session_id: text(LIMITS.name),
    user_input: text(LIMITS.longText),
    agent_response: text(LIMITS.longText),
    // Accepted for compatibility and ignored: the message's user is the authenticated caller.
    user_id: anyValue(LIMITS.name),
    // Cairn extension: when the turn was said (Unix seconds or ISO 8601; default now), checked by the service.
    valid_at: { type: ['number', 'string'], maxLength: 64 },
  },
};

/** A boolean or a word the service reads as one. */
const statusBody = { type: 'object', required: ['status'], properties: { status: anyValue(16, 1) } };

const searchQuery = {
  type: 'object',
  required: ['query', 'memory_id'],
  properties: {
    query: text(LIMITS.queryText, 1),
    memory_id: stringList,
    agent_id: text(LIMITS.name),
    session_id: text(LIMITS.name),
    user_id: text(LIMITS.name),
    similarity_threshold: { ...unit, default: 0.2 },
    keywords_similarity_weight: { ...unit, default: 0.7 },
    top_n: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
    // Cairn extensions (docs/memories.md "Search: dates, types and source turns"); times checked by the service.
    valid_since: text(64),
    valid_until: text(64),
    message_type: stringList,
    include_source: { type: 'boolean', default: false },
    include_invalid: { type: 'boolean', default: false },
  },
};

const recentQuery = {
  type: 'object',
  required: ['memory_id'],
  properties: {
    memory_id: stringList,
    agent_id: text(LIMITS.name),
    session_id: text(LIMITS.name),
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
    include_invalid: { type: 'boolean', default: false },
  },
};

/** A correction: the item's new text (docs/memories.md "Facts stay current"). */
const correctBody = { type: 'object', additionalProperties: false, required: ['content'], properties: { content: anyValue(LIMITS.longText, 1) } };

export function memoryRoutes(memories: MemoryService): RouteSpec[] {
  return [
    route({
      method: 'post', path: '/memories', tag: 'memories', summary: 'Create a memory (a taken name gets a (1), (2)... suffix)', body: createBody,
      handler: async ({ principal, body }) => done(await memories.create(principal, body)),
    }),
    route({
      method: 'get', path: '/memories', tag: 'memories', summary: 'List memories: {memory_list, total_count}', query: listMemoriesQuery,
      handler: async ({ principal, query }) => done(await memories.list(principal, query)),
    }),
    route({
      method: 'put', path: '/memories/:memory_id', tag: 'memories',
      summary: `Update a memory (memory_size in (0, ${MAX_MEMORY_SIZE}]; embd_id only while empty; the fixed system_prompt parts must stay)`, body: updateBody,
      handler: async ({ principal, params, body }) => done(await memories.update(principal, params.memory_id, body)),
    }),
    route({
      method: 'delete', path: '/memories/:memory_id', tag: 'memories', summary: 'Delete a memory and its messages',
      handler: async ({ principal, params }) => {
        await memories.delete(principal, params.memory_id);
        return done();
      },
    }),
    route({
      method: 'get', path: '/memories/:memory_id/config', tag: 'memories', summary: 'A memory\'s configuration',
      handler: async ({ principal, params }) => done(await memories.config(principal, params.memory_id)),
    }),
    route({
      method: 'get', path: '/memories/:memory_id', tag: 'memories', summary: 'List a memory\'s messages, newest first, extracted items nested under their raw message', query: listMessagesQuery,
      handler: async ({ principal, params, query }) => done(await memories.listMessages(principal, params.memory_id, query)),
    }),
    route({
      method: 'post', path: '/messages', tag: 'memories', summary: 'Add a conversation turn to memories (stored and searchable at once; extraction runs as a workflow per memory)', body: addMessageBody,
      handler: async ({ principal, body }) => {
        // body.user_id is ignored: the message's user is the authenticated caller.
        const results = await memories.addMessage(principal, {
          memory_ids: body.memory_id, agent_id: body.agent_id, session_id: body.session_id, user_input: body.user_input, agent_response: body.agent_response, valid_at: body.valid_at,
        });
        return new Reply(results, { message: 'All add to task.' });
      },
    }),
    route({
      method: 'get', path: '/messages/search', tag: 'memories', admission: 'short', summary: 'Hybrid search of memory messages (keywords_similarity_weight 0.5 = keywords and meaning equally)', query: searchQuery,
      handler: async ({ principal, query }) => done(await memories.search(principal, { ...query, memory_ids: query.memory_id })),
    }),
    route({
      method: 'get', path: '/messages', tag: 'memories', summary: 'Recent memory messages, most recent first', query: recentQuery,
      handler: async ({ principal, query }) => done(await memories.recent(principal, { ...query, memory_ids: query.memory_id })),
    }),
    route({
      method: 'get', path: '/messages/:ref/content', tag: 'memories', summary: 'A message ({memory_id}:{message_id}) with its full content and embedding',
      handler: async ({ principal, params }) => {
        const { memoryId, messageId } = parseMessageRef(params.ref);
        return done(await memories.messageContent(principal, memoryId, messageId));
      },
    }),
    route({
      method: 'delete', path: '/messages/:ref', tag: 'memories', summary: 'Forget a message ({memory_id}:{message_id}): kept and listed, never retrieved, first removed by FIFO',
      handler: async ({ principal, params }) => {
        const { memoryId, messageId } = parseMessageRef(params.ref);
        await memories.forget(principal, memoryId, messageId);
        return done();
      },
    }),
    route({
      method: 'put', path: '/messages/:ref', tag: 'memories', summary: 'Enable or disable a message ({memory_id}:{message_id}); disabled messages are not retrieved', body: statusBody,
      handler: async ({ principal, params, body }) => {
        const { memoryId, messageId } = parseMessageRef(params.ref);
        await memories.setStatus(principal, memoryId, messageId, body.status);
        return done();
      },
    }),
    route({
      method: 'post', path: '/messages/:ref/correct', tag: 'memories', summary: 'Correct an extracted item ({memory_id}:{message_id}): a new item with the given content replaces it (kept as history)', body: correctBody,
      handler: async ({ principal, params, body }) => {
        const { memoryId, messageId } = parseMessageRef(params.ref);
        return done(await memories.correct(principal, memoryId, messageId, body.content));
      },
    }),
    route({
      method: 'post', path: '/messages/:ref/retract', tag: 'memories', summary: 'Retract an extracted item ({memory_id}:{message_id}): no longer current, nothing replaces it, never deleted',
      handler: async ({ principal, params }) => {
        const { memoryId, messageId } = parseMessageRef(params.ref);
        return done(await memories.retract(principal, memoryId, messageId));
      },
    }),
  ];
}
