import { route, Reply, type RouteSpec } from '../routes.js';
import { parseMessageRef, type MemoryService } from '../../services/memories.js';
import { MAX_MEMORY_SIZE } from '../../memories/types.js';

/** RAGFlow's memory routes answer `"message": true` next to the data. */
const done = (data: unknown = null) => new Reply(data, { message: true });

const unit = { type: 'number', minimum: 0, maximum: 1 };
/** A list parameter: repeated (`?a=x&a=y`) or comma-separated (`?a=x,y`); split by the service. */
const stringList = { type: 'array', items: { type: 'string' } };
const nullableText = { type: ['string', 'null'] };

const memoryFields = {
  name: { type: 'string' },
  memory_type: {},
  embd_id: { type: 'string' },
  llm_id: { type: 'string' },
  description: { type: ['string', 'null'], maxLength: 65535 },
  avatar: nullableText,
  permission: { type: 'string' },
  permissions: { type: 'string' },
  memory_size: { type: 'number' },
  forgetting_policy: { type: 'string' },
  temperature: { type: 'number' },
  system_prompt: nullableText,
  user_prompt: nullableText,
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
    page: { type: 'integer', minimum: 1, default: 1 },
    page_size: { type: 'integer', minimum: 1, maximum: 100, default: 50 },
    orderby: { enum: ['create_time', 'update_time'], default: 'create_time' },
    desc: { type: 'boolean', default: true },
    memory_type: stringList,
    tenant_id: stringList,
    owner_ids: stringList,
    ids: stringList,
    storage_type: { type: 'string' },
    keywords: { type: 'string' },
  },
};

const listMessagesQuery = {
  type: 'object',
  properties: {
    agent_id: stringList,
    keywords: { type: 'string' },
    page: { type: 'integer', minimum: 1, default: 1 },
    page_size: { type: 'integer', minimum: 1, maximum: 100, default: 50 },
  },
};

const addMessageBody = {
  type: 'object',
  required: ['memory_id', 'agent_id', 'session_id', 'user_input', 'agent_response'],
  properties: {
    memory_id: { type: ['array', 'string'], items: { type: 'string', minLength: 1 }, minItems: 1, minLength: 1 },
    agent_id: { type: 'string' },
    session_id: { type: 'string' },
    user_input: { type: 'string' },
    agent_response: { type: 'string' },
    // Accepted for compatibility and ignored: the message's user is the authenticated caller.
    user_id: {},
  },
};

const statusBody = { type: 'object', required: ['status'], properties: { status: {} } };

const searchQuery = {
  type: 'object',
  required: ['query', 'memory_id'],
  properties: {
    query: { type: 'string', minLength: 1 },
    memory_id: stringList,
    agent_id: { type: 'string' },
    session_id: { type: 'string' },
    user_id: { type: 'string' },
    similarity_threshold: { ...unit, default: 0.2 },
    keywords_similarity_weight: { ...unit, default: 0.7 },
    top_n: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
  },
};

const recentQuery = {
  type: 'object',
  required: ['memory_id'],
  properties: {
    memory_id: stringList,
    agent_id: { type: 'string' },
    session_id: { type: 'string' },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
  },
};

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
          memory_ids: body.memory_id, agent_id: body.agent_id, session_id: body.session_id, user_input: body.user_input, agent_response: body.agent_response,
        });
        return new Reply(results, { message: 'All add to task.' });
      },
    }),
    route({
      method: 'get', path: '/messages/search', tag: 'memories', summary: 'Hybrid search of memory messages (keywords_similarity_weight 0.5 = keywords and meaning equally)', query: searchQuery,
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
  ];
}
