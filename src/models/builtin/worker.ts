/** Worker-thread entry: runs sentence encoders off the API's event loop. */
import { parentPort } from 'node:worker_threads';
import { SentenceEncoder, type EncoderOptions } from './encoder.js';
import { EmbedScheduler, type BatchLimits } from './scheduler.js';

export type EncoderConfig = EncoderOptions & { limits: BatchLimits };

export interface WorkerRequest {
  id: number;
  config: EncoderConfig;
  texts: string[];
}

export type WorkerResponse =
  | { id: number; ok: true; vectors: Float32Array }
  | { id: number; ok: false; message: string };

interface Loaded {
  encoder: SentenceEncoder;
  scheduler: EmbedScheduler;
}

const port = parentPort!;
/** One loaded model (ONNX session + scheduler) per distinct configuration. */
const loaded = new Map<string, Promise<Loaded>>();

function load(config: EncoderConfig): Promise<Loaded> {
  const key = JSON.stringify(config);
  let entry = loaded.get(key);
  if (!entry) {
    entry = SentenceEncoder.load(config).then(
      (encoder) => ({ encoder, scheduler: new EmbedScheduler((b) => encoder.embedBatch(b), config.spec.dims, config.limits) }),
      (err: unknown) => {
        loaded.delete(key); // e.g. files installed later
        throw err;
      },
    );
    loaded.set(key, entry);
  }
  return entry;
}

async function handle(req: WorkerRequest): Promise<WorkerResponse> {
  try {
    const { encoder, scheduler } = await load(req.config);
    return { id: req.id, ok: true, vectors: await scheduler.submit(req.texts.map((t) => encoder.tokenize(t))) };
  } catch (err) {
    return { id: req.id, ok: false, message: err instanceof Error ? err.message : String(err) };
  }
}

port.on('message', (req: WorkerRequest) => {
  void handle(req).then((reply) => port.postMessage(reply, reply.ok ? [reply.vectors.buffer as ArrayBuffer] : []));
});
