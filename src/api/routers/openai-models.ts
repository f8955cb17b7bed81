import { route, type RouteSpec } from '../routes.js';
import { safeJson } from '../envelope.js';
import { OPENAI_ERRORS } from './openai.js';
import type { ChatService } from '../../services/chats.js';
import type { AgentService } from '../../services/agents.js';
import type { ProviderService } from '../../services/providers.js';
import type { CanvasDsl } from '../../agents/dsl.js';

/** OpenAI's model object: what `client.models.list()` reads. */
interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

const MODEL_LIST_RESPONSES = {
  '200': {
    description: "OpenAI's model list: the model that answers first, then every other chat model the workspace can select",
    content: {
      'application/json': {
        type: 'object',
        required: ['object', 'data'],
        properties: { object: { const: 'list' }, data: { type: 'array', items: { type: 'object', required: ['id', 'object'] } } },
      },
    },
  },
};

/** The chat models of an agent's LLM and Agent components, in canvas order (an empty llm_id means the workspace default). */
export function agentModelIds(dsl: CanvasDsl, defaultModel: string): string[] {
  return Object.values(dsl.components ?? {})
    .filter((c) => c.obj.component_name === 'LLM' || c.obj.component_name === 'Agent')
    .map((c) => (typeof c.obj.params.llm_id === 'string' && c.obj.params.llm_id.trim() ? c.obj.params.llm_id : defaultModel));
}

/**
 * `GET .../models` beside the OpenAI-compatible completion routes, so an `openai` client whose base URL is
 * the chat's (or agent's) route can list models. The chat route answers with the model named in the request
 * ("model" keeps the chat's own), so every chat model of the workspace is listed, the one that answers first.
 */
export function openaiModelRoutes(chats: ChatService, agents: AgentService, providers: ProviderService): RouteSpec[] {
  const list = async (tenantId: string, first: string[]): Promise<{ object: 'list'; data: ModelObject[] }> => {
    const created = Math.floor(Date.now() / 1000);
    const all = (await providers.listModels(tenantId, 'chat')).map((m) => m.model_id);
    const ids = [...new Set([...first, ...all])];
    return { object: 'list', data: ids.map((id) => ({ id, object: 'model', created, owned_by: id.split('@').at(-1) ?? 'cairn' })) };
  };
  type Principal = Parameters<ChatService['get']>[0];
  const spec = (path: string, summary: string, answering: (p: Principal, params: Record<string, string>, defaultModel: string) => Promise<string[]>) =>
    route({
      method: 'get', path, tag: 'openai', summary, raw: true, errors: OPENAI_ERRORS, responses: MODEL_LIST_RESPONSES,
      handler: async ({ principal, params, res }) => {
        const first = await answering(principal, params, (await providers.getDefaults(principal.tenantId)).chat_model);
        res.type('application/json').send(safeJson(await list(principal.tenantId, first)));
      },
    });
  return [
    spec('/openai/:chat_id/models', "OpenAI-compatible model list of a chat assistant's route (its own model first)", async (p, params, defaultModel) => [
      (await chats.get(p, params.chat_id!)).llm_id ?? defaultModel,
    ]),
    spec('/agents_openai/:agent_id/models', "OpenAI-compatible model list of an agent's route (the models its LLM and Agent components use first)", async (p, params, defaultModel) => {
      const { dsl } = await agents.sessionDsl(await agents.get(p, params.agent_id!), false);
      return agentModelIds(dsl, defaultModel);
    }),
  ];
}
