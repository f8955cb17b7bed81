import type { Api } from './client.js';
import type { Fakes } from '../fakes/index.js';

/** Configures the fake model servers as the tenant's providers: chat + embedding (OpenAI-compatible), rerank (Xinference). */
export async function useFakeProviders(api: Api, fakes: Fakes, options: { defaultChat?: boolean } = {}) {
  const openai = await api.post('/providers/OpenAI-API-Compatible/instances', {
    instance_name: 'fake',
    base_url: fakes.openai.baseUrl,
    api_key: 'sk-fake-secret-key',
    model_info: [
      { model_name: 'fake-chat', model_type: 'chat' },
      { model_name: 'fake-embed', model_type: 'embedding' },
    ],
  });
  if (openai.status !== 200) throw new Error(`provider setup failed: ${JSON.stringify(openai.body)}`);
  const xinference = await api.post('/providers/Xinference/instances', {
    instance_name: 'fake',
    base_url: fakes.xinference.url,
    model_info: [{ model_name: 'fake-rerank', model_type: 'rerank' }],
  });
  if (xinference.status !== 200) throw new Error(`provider setup failed: ${JSON.stringify(xinference.body)}`);
  if (options.defaultChat !== false) await api.patch('/models/default', { model_type: 'chat', model_id: 'fake-chat@OpenAI-API-Compatible' });
  return { chat: 'fake-chat@OpenAI-API-Compatible', embedding: 'fake-embed@OpenAI-API-Compatible', rerank: 'fake-rerank@Xinference' };
}
