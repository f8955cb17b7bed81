/**
 * The embedding process's memory and CPU under ingest-shaped load, with nothing else of Cairn around it:
 * the built-in model as the service runs it (BuiltinEmbeddingModel: its own process, host.ts), fed the ingest
 * bench's texts (its corpus, extracted and chunked as the parse step does) by `--callers` steps at once, each
 * sending a document's title alone and then its chunks in requests of `--request`, as the parse steps do.
 *
 *   flock /tmp/bench.lock npx tsx bench/ingest/embedding-memory.ts [--callers 16] [--request 32] [--repeat 1]
 *     [--sample-ms 50] [--pdfs 50] [--docx 50] [--batch-tokens N (the service's default when omitted)]
 *     [--model bge-small-en-v1.5 | all-MiniLM-L6-v2 (a built-in embedding model; the default one when omitted)]
 *
 * Prints the process's RSS (sampled every `--sample-ms`): at the first answer (model loaded), p50, p90 and peak
 * while embedding, and its anonymous part at the peak; its CPU-ms per text; the texts/s; the load average.
 * Settings of the process under test come from the environment, as in the service (CAIRN_EMBED_THREADS,
 * GLIBC_TUNABLES, MALLOC_ARENA_MAX; host.ts drops MALLOC_MMAP_THRESHOLD_).
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { BuiltinEmbeddingModel } from '../../src/models/builtin/embedding-model.js';
import { BUILTIN_EMBEDDING_MODEL_ID, builtinSpecFor } from '../../src/models/builtin/spec.js';
import { embeddingProcessStatus } from '../../src/models/builtin/host.js';
import { percentile } from '../common.js';
import { processCpuSeconds } from '../processes.js';
import { corpusTexts, type DocumentTexts } from './corpus-texts.js';

const { values: args } = parseArgs({
  options: {
    callers: { type: 'string', default: '16' },
    request: { type: 'string', default: '32' },
    repeat: { type: 'string', default: '1' },
    'sample-ms': { type: 'string', default: '50' },
    pdfs: { type: 'string', default: '50' },
    docx: { type: 'string', default: '50' },
    'batch-tokens': { type: 'string' },
    model: { type: 'string', default: BUILTIN_EMBEDDING_MODEL_ID.split('@')[0] },
  },
});


/** Resident and anonymous MB of a process, from /proc (0 once it is gone). */
function memoryOf(pid: number): { rss: number; anon: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return { rss: kb('VmRSS') / 1024, anon: kb('RssAnon') / 1024 };
  } catch {
    return { rss: 0, anon: 0 };
  }
}

async function feed(model: BuiltinEmbeddingModel, docs: DocumentTexts[], callers: number, request: number): Promise<number> {
  let next = 0;
  let texts = 0;
  const step = async () => {
    while (next < docs.length) {
      const doc = docs[next++]!;
      await model.embed([doc.title]);
      texts++;
      for (let i = 0; i < doc.chunks.length; i += request) {
        const part = doc.chunks.slice(i, i + request);
        await model.embed(part);
        texts += part.length;
      }
    }
  };
  await Promise.all(Array.from({ length: callers }, step));
  return texts;
}

const docs = await corpusTexts(Number(args.pdfs), Number(args.docx));
const spec = builtinSpecFor(args.model!);
if (!spec) throw new Error(`--model ${args.model}: not a built-in embedding model`);
const model = new BuiltinEmbeddingModel({ spec, ...(args['batch-tokens'] ? { batchTokens: Number(args['batch-tokens']) } : {}) });
const loadAtStart = loadavg()[0]!;
await model.embed(['the model loads']);
const pid = embeddingProcessStatus().pid!;
const loaded = memoryOf(pid);
const samples: { rss: number; anon: number }[] = [];
const sampler = setInterval(() => samples.push(memoryOf(pid)), Number(args['sample-ms']));
const cpuBefore = processCpuSeconds(pid);
const started = performance.now();
let texts = 0;
for (let r = 0; r < Number(args.repeat); r++) texts += await feed(model, docs, Number(args.callers), Number(args.request));
const seconds = (performance.now() - started) / 1000;
const cpuSeconds = processCpuSeconds(pid) - cpuBefore;
clearInterval(sampler);
const after = memoryOf(pid);
const rss = samples.map((s) => s.rss).sort((a, b) => a - b);
const peak = samples.reduce((a, b) => (b.rss > a.rss ? b : a), { rss: 0, anon: 0 });
const round = (n: number) => Math.round(n);
console.log(
  JSON.stringify({
    texts,
    seconds: +seconds.toFixed(1),
    texts_per_s: +(texts / seconds).toFixed(1),
    cpu_ms_per_text: +((1000 * cpuSeconds) / texts).toFixed(2),
    rss_loaded_mb: round(loaded.rss),
    rss_p50_mb: round(percentile(rss, 50)),
    rss_p90_mb: round(percentile(rss, 90)),
    rss_peak_mb: round(peak.rss),
    anon_at_peak_mb: round(peak.anon),
    rss_after_mb: round(after.rss),
    model: spec.name,
    batch_tokens: args['batch-tokens'] ?? 'default',
    load: `${loadAtStart.toFixed(2)} -> ${loadavg()[0]!.toFixed(2)}`,
    env: Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(MALLOC_|GLIBC_TUNABLES|CAIRN_EMBED)/.test(k))),
  }),
);
process.exit(0);
