/** Worker-thread entry: runs the sentence encoder off the API's event loop. */
import { parentPort, workerData } from 'node:worker_threads';
import { SentenceEncoder, type EncoderOptions } from './encoder.js';

export interface WorkerRequest {
  id: number;
  texts: string[];
}

export type WorkerResponse =
  | { id: number; ok: true; vectors: Float32Array }
  | { id: number; ok: false; message: string };

const port = parentPort!;
let encoder: Promise<SentenceEncoder> | undefined;
// One request at a time: ONNX Runtime already uses every thread it was given for a batch.
let queue: Promise<void> = Promise.resolve();

function loadEncoder(): Promise<SentenceEncoder> {
  encoder ??= SentenceEncoder.load(workerData as EncoderOptions).catch((err: unknown) => {
    encoder = undefined;
    throw err;
  });
  return encoder;
}

port.on('message', (req: WorkerRequest) => {
  queue = queue.then(async () => {
    let reply: WorkerResponse;
    try {
      const vectors = await (await loadEncoder()).encode(req.texts);
      reply = { id: req.id, ok: true, vectors };
    } catch (err) {
      reply = { id: req.id, ok: false, message: err instanceof Error ? err.message : String(err) };
    }
    port.postMessage(reply, reply.ok ? [reply.vectors.buffer as ArrayBuffer] : []);
  });
});
