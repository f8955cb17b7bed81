/** Worker-thread entry: runs the sentence encoder off the API's event loop. */
import { parentPort, workerData } from 'node:worker_threads';
import { SentenceEncoder, type EncoderOptions } from './encoder.js';
import { EmbedScheduler, type BatchLimits } from './scheduler.js';

export type WorkerData = EncoderOptions & { limits: BatchLimits };

export interface WorkerRequest {
  id: number;
  texts: string[];
}

export type WorkerResponse =
  | { id: number; ok: true; vectors: Float32Array }
  | { id: number; ok: false; message: string };

const port = parentPort!;
const options = workerData as WorkerData;

interface Loaded {
  encoder: SentenceEncoder;
  scheduler: EmbedScheduler;
}
let loaded: Promise<Loaded> | undefined;

function load(): Promise<Loaded> {
  loaded ??= SentenceEncoder.load(options).then(
    (encoder) => ({ encoder, scheduler: new EmbedScheduler((b) => encoder.embedBatch(b), options.spec.dims, options.limits) }),
    (err: unknown) => {
      loaded = undefined;
      throw err;
    },
  );
  return loaded;
}

async function handle(req: WorkerRequest): Promise<WorkerResponse> {
  try {
    const { encoder, scheduler } = await load();
    return { id: req.id, ok: true, vectors: await scheduler.submit(req.texts.map((t) => encoder.tokenize(t))) };
  } catch (err) {
    return { id: req.id, ok: false, message: err instanceof Error ? err.message : String(err) };
  }
}

port.on('message', (req: WorkerRequest) => {
  void handle(req).then((reply) => port.postMessage(reply, reply.ok ? [reply.vectors.buffer as ArrayBuffer] : []));
});
