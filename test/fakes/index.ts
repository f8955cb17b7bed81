/**
 * Scripted model servers speaking the real provider protocols, for tests and benchmarks.
 *
 *   const fakes = await startFakes({ answer: fixedAnswer('42') });
 *   createModel({ factory: 'OpenAI-API-Compatible', model_name: 'm', model_type: 'chat', base_url: fakes.openai.baseUrl });
 *   createModel({ factory: 'Ollama', model_name: 'llama3.2', model_type: 'chat', base_url: fakes.ollama.url });
 *   createModel({ factory: 'Xinference', model_name: 'm', model_type: 'rerank', base_url: fakes.xinference.url });
 *   ...
 *   // Tool calls: a script answers with `tool_calls`; each fake sends them in its own protocol.
 *   fakes.openai.behaviour.answer = toolRoundTrip('search', (q) => ({ query: q }), (result) => `Found: ${result}`);
 *   fakes.openai.requests.at(-1)!.body.tools;   // every request body is recorded; fakes.openai.clear() forgets them
 *   await fakes.close();
 */
import { startFakeOllama, type FakeOllamaOptions } from './ollama.js';
import { startFakeOpenAI, startFakeXinference, type FakeOpenAI } from './openai.js';
import type { FakeBehaviour } from './script.js';
import type { FakeServer } from './server.js';

export * from './script.js';
export * from './server.js';
export * from './openai.js';
export * from './ollama.js';
export * from './mcp.js';

export interface Fakes {
  openai: FakeOpenAI;
  ollama: FakeServer;
  xinference: FakeOpenAI;
  close(): Promise<void>;
}

/** Starts all three fakes with the same behaviour (each can be changed later through `.behaviour`). */
export async function startFakes(behaviour: Partial<FakeBehaviour> & Pick<FakeOllamaOptions, 'models'> = {}): Promise<Fakes> {
  const { models, ...shared } = behaviour;
  const [openai, ollama, xinference] = await Promise.all([
    startFakeOpenAI(shared),
    startFakeOllama({ ...shared, models }),
    startFakeXinference(shared),
  ]);
  return {
    openai,
    ollama,
    xinference,
    close: async () => {
      await Promise.all([openai.close(), ollama.close(), xinference.close()]);
    },
  };
}
