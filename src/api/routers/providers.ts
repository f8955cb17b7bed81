import { route, type RouteSpec } from '../routes.js';
import { MODEL_TYPES, type ProviderService } from '../../services/providers.js';
import { integer, LIMITS, list, text } from '../schemas.js';

/** An API key or secret as providers issue them. */
const secret = text(4096);

const modelInfo = {
  type: 'object',
  required: ['model_name', 'model_type'],
  properties: {
    model_name: { type: 'string', minLength: 1, maxLength: 200 },
    model_type: { anyOf: [{ enum: [...MODEL_TYPES, 'image2text'] }, { ...list({ enum: [...MODEL_TYPES, 'image2text'] }, 16), minItems: 1 }] },
    max_tokens: integer(1, LIMITS.tokens),
    vision: { type: 'boolean' },
  },
};

const instanceBody = {
  type: 'object',
  required: ['instance_name'],
  properties: {
    instance_name: { type: 'string', minLength: 1, maxLength: 128 },
    api_key: secret,
    base_url: { type: 'string', maxLength: 2048 },
    region: text(LIMITS.name),
    model_info: list(modelInfo),
  },
};

const instanceUpdateBody = {
  type: 'object',
  properties: { api_key: secret, base_url: { type: 'string', maxLength: 2048 }, model_info: list(modelInfo) },
};

const connectionBody = {
  type: 'object',
  required: ['model_name', 'model_type'],
  properties: { base_url: text(2048), api_key: secret, model_name: text(200, 1), model_type: { enum: MODEL_TYPES } },
};

const defaultBody = {
  type: 'object',
  required: ['model_type'],
  properties: {
    model_type: { enum: MODEL_TYPES },
    model_id: { type: ['string', 'null'], maxLength: 255 },
    model_name: text(200),
    model_provider: text(LIMITS.name),
    model_instance: text(128),
  },
};

/** RAGFlow-compatible provider configuration: instances (api_key, base_url, models), models and defaults. */
export function providerRoutes(providers: ProviderService): RouteSpec[] {
  const inst = '/providers/:provider/instances/:instance';
  return [
    route({ method: 'get', path: '/providers', tag: 'models', summary: 'Provider kinds that can be configured', handler: () => providers.listFactories() }),
    route({
      method: 'put', path: '/providers', tag: 'models', summary: 'Add a provider (checks that the kind is known)',
      body: { type: 'object', required: ['provider_name'], properties: { provider_name: text(LIMITS.name) } },
      handler: async ({ principal, body }) => {
        await providers.listInstances(principal, body.provider_name);
        return { provider_name: body.provider_name };
      },
    }),
    route({ method: 'get', path: '/providers/:provider/instances', tag: 'models', summary: 'Instances of a provider', handler: ({ principal, params }) => providers.listInstances(principal, params.provider) }),
    route({
      method: 'post', path: '/providers/:provider/instances', tag: 'models', summary: 'Configure a provider instance (api_key, base_url, models)', body: instanceBody,
      handler: ({ principal, params, body }) => providers.createInstance(principal, params.provider, body),
    }),
    route({ method: 'get', path: inst, tag: 'models', summary: 'One provider instance (secrets masked)', handler: ({ principal, params }) => providers.getInstance(principal, params.provider, params.instance) }),
    route({
      method: 'put', path: inst, tag: 'models', summary: 'Update a provider instance', body: instanceUpdateBody,
      handler: ({ principal, params, body }) => providers.updateInstance(principal, params.provider, params.instance, body),
    }),
    route({
      method: 'delete', path: inst, tag: 'models', summary: 'Remove a provider instance',
      handler: async ({ principal, params }) => {
        await providers.deleteInstance(principal, params.provider, params.instance);
        return true;
      },
    }),
    route({ method: 'get', path: `${inst}/models`, tag: 'models', summary: 'Models of an instance', handler: async ({ principal, params }) => (await providers.getInstance(principal, params.provider, params.instance)).models }),
    route({
      method: 'post', path: `${inst}/models`, tag: 'models', summary: 'Add models to an instance',
      body: { type: 'object', required: ['model_info'], properties: { model_info: { ...list(modelInfo), minItems: 1 } } },
      handler: ({ principal, params, body }) => providers.addModels(principal, params.provider, params.instance, body.model_info),
    }),
    route({
      method: 'delete', path: `${inst}/models/:model`, tag: 'models', summary: 'Remove a model from an instance',
      handler: async ({ principal, params }) => {
        await providers.deleteModel(principal, params.provider, params.instance, params.model);
        return true;
      },
    }),
    route({
      method: 'post', path: '/providers/:provider/connection', tag: 'models', summary: 'Check that a provider answers and has the model', body: connectionBody,
      handler: ({ principal, params, body }) => providers.checkConnection(principal, params.provider, body),
    }),
    route({
      method: 'get', path: '/models', tag: 'models', summary: 'Models the tenant can select', query: { type: 'object', properties: { type: { enum: MODEL_TYPES } } },
      handler: ({ principal, query }) => providers.listModels(principal.tenantId, query.type),
    }),
    route({ method: 'get', path: '/users/me/models', tag: 'models', summary: "The caller's model settings and selectable models (RAGFlow's tenant info)", handler: ({ principal }) => providers.tenantModels(principal) }),
    route({ method: 'get', path: '/models/default', tag: 'models', summary: 'Default chat, embedding and rerank models', handler: ({ principal }) => providers.getDefaults(principal.tenantId) }),
    route({
      method: 'patch', path: '/models/default', tag: 'models', summary: 'Set a default model', body: defaultBody,
      handler: ({ principal, body }) => {
        const id = body.model_id !== undefined ? body.model_id : body.model_name && body.model_provider ? [body.model_name, body.model_instance, body.model_provider].filter(Boolean).join('@') : null;
        return providers.setDefault(principal.tenantId, body.model_type, id);
      },
    }),
  ];
}
