/** Worker-thread entry of the built-in chat model: runs node-llama-cpp off the API's event loop. */
import { parentPort } from 'node:worker_threads';
import { ModelError } from '../types.js';
import { ChatEngine, disposeLlamaRuntime } from './chat-engine.js';
import { BUILTIN_FACTORY } from './spec.js';
import { configKey, type ChatEngineConfig, type FromWorker, type ToWorker } from './chat-protocol.js';

const port = parentPort!;
const engines = new Map<string, ChatEngine>();
const running = new Map<number, AbortController>();

const post = (msg: FromWorker) => port.postMessage(msg);

function engineFor(config: ChatEngineConfig): ChatEngine {
  const key = configKey(config);
  let engine = engines.get(key);
  if (!engine) {
    engine = new ChatEngine(config, (status) => post({ type: 'status', key, status }));
    engines.set(key, engine);
  }
  return engine;
}

async function generate(msg: Extract<ToWorker, { type: 'generate' }>): Promise<void> {
  const controller = new AbortController();
  running.set(msg.id, controller);
  try {
    const { text, usage } = await engineFor(msg.config).generate(
      msg.request,
      (kind, chunk) => post({ type: 'chunk', id: msg.id, kind, text: chunk }),
      controller.signal,
    );
    post({ type: 'done', id: msg.id, text, usage });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof ModelError) post({ type: 'error', id: msg.id, message, status: err.status });
    else post({ type: 'error', id: msg.id, message: `${BUILTIN_FACTORY}: ${message}`, status: 500 });
  } finally {
    running.delete(msg.id);
  }
}

async function dispose(): Promise<void> {
  for (const c of running.values()) c.abort(new Error('the built-in chat model is shutting down'));
  for (const engine of engines.values()) await engine.dispose().catch(() => undefined);
  engines.clear();
  await disposeLlamaRuntime().catch(() => undefined);
  post({ type: 'disposed' });
}

port.on('message', (msg: ToWorker) => {
  if (msg.type === 'generate') void generate(msg);
  else if (msg.type === 'cancel') running.get(msg.id)?.abort(new Error('cancelled'));
  else if (msg.type === 'dispose') void dispose();
});
