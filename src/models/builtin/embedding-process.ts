/**
 * Child-process entry of the built-in embedding model (host.ts starts it): tokenizes and embeds the texts
 * its parent sends, with one ONNX session and one batch scheduler per distinct configuration. It exits
 * when its parent goes away; the parent ends it when it has been idle (all its memory comes back).
 */
import { SentenceEncoder, type EncoderOptions } from './encoder.js';
import { EmbedScheduler, type BatchLimits } from './scheduler.js';

export type EncoderConfig = EncoderOptions & {
  limits: BatchLimits;
  /** The process is ended after this many seconds without a request (read by the parent, host.ts). */
  idleSec: number;
};

export interface EmbedRequest {
  id: number;
  config: EncoderConfig;
  texts: string[];
}

export type EmbedReply =
  | { type: 'ready' }
  | { id: number; ok: true; vectors: Float32Array }
  | { id: number; ok: false; message: string };

interface Loaded {
  encoder: SentenceEncoder;
  scheduler: EmbedScheduler;
}

/** One loaded model per configuration; the idle period is the parent's business, not part of the key. */
const loaded = new Map<string, Promise<Loaded>>();

function load(config: EncoderConfig): Promise<Loaded> {
  const { idleSec: _, ...rest } = config;
  const key = JSON.stringify(rest);
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

async function handle(req: EmbedRequest): Promise<EmbedReply> {
  try {
    const { encoder, scheduler } = await load(req.config);
    return { id: req.id, ok: true, vectors: await scheduler.submit(req.texts.map((t) => encoder.tokenize(t))) };
  } catch (err) {
    return { id: req.id, ok: false, message: err instanceof Error ? err.message : String(err) };
  }
}

const send = (reply: EmbedReply) => process.send?.(reply);

process.on('message', (req: EmbedRequest) => void handle(req).then(send));
// The parent died or let go of us: nothing left to serve.
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
