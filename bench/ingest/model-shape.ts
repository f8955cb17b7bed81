/**
 * How the shape of the embedding requests changes what the model costs, with nothing of Cairn around it:
 * the built-in encoder and the batch scheduler in this one process (no IPC), fed the ingest bench's texts
 * (its corpus, extracted and chunked here as the parse step does) the way the limit measurement feeds them
 * (calls of 512, one at a time) and the way the embedding steps of a parse feed them (documents taken by
 * `--callers` steps at once, each sending its title and then its chunks in requests of `--request`,
 * `--depth` of them in flight per step; the defaults are what activities/parse/embed.ts sends).
 *
 *   flock /tmp/bench.lock npx tsx bench/ingest/model-shape.ts [--shapes limit,ingest] [--callers 16]
 *     [--request 32] [--depth 2] [--title first|alone] [--repeat 1] [--batch-texts 32] [--batch-tokens 1024] [--window 256]
 *     [--simulate MS_PER_1000_PADDED_TOKENS]
 *
 * Prints per shape: texts/s, CPU-ms per text (this process: the model's threads and the scheduler), cores,
 * model runs and texts per run, the padded share of the tokens run, and the cores other processes on the machine
 * used meanwhile (a run they took cores from says little).
 */
import { availableParallelism, cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { SentenceEncoder } from '../../src/models/builtin/encoder.js';
import { EmbedScheduler, type BatchLimits } from '../../src/models/builtin/scheduler.js';
import { locateModelFiles } from '../../src/models/builtin/locate.js';
import { BGE_SMALL_EN_V15 } from '../../src/models/builtin/spec.js';
import { corpusTexts, type DocumentTexts } from './corpus-texts.js';

const { values: args } = parseArgs({
  options: {
    shapes: { type: 'string', default: 'limit,ingest' },
    callers: { type: 'string', default: '16' },
    request: { type: 'string', default: '32' },
    depth: { type: 'string', default: '2' },
    title: { type: 'string', default: 'first' },
    repeat: { type: 'string', default: '1' },
    pdfs: { type: 'string', default: '50' },
    docx: { type: 'string', default: '50' },
    'batch-texts': { type: 'string', default: '32' },
    'batch-tokens': { type: 'string', default: '1024' },
    window: { type: 'string', default: '256' },
    threads: { type: 'string', default: String(availableParallelism()) },
    simulate: { type: 'string' },
  },
});


interface RunStats {
  runs: number;
  texts: number;
  tokens: number;
  padded: number;
}

/** Sends the texts as one shape of requests; resolves when every text is embedded. */
type Feed = (submit: (texts: string[]) => Promise<Float32Array>) => Promise<void>;

const CALL = 512;

function limitShape(docs: DocumentTexts[]): Feed {
  // As bench/ingest/model-limit.ts: the titles, then every chunk text, in calls of 512 one after the other.
  const texts = [...docs.map((d) => d.title), ...docs.flatMap((d) => d.chunks)];
  return async (submit) => {
    for (let i = 0; i < texts.length; i += CALL) await submit(texts.slice(i, i + CALL));
  };
}

function ingestShape(docs: DocumentTexts[], callers: number, request: number, depth: number, titleFirst: boolean): Feed {
  return async (submit) => {
    let next = 0;
    const step = async () => {
      while (next < docs.length) {
        const doc = docs[next++]!;
        const requests: string[][] = [];
        for (let i = 0; i < doc.chunks.length; i += request) requests.push(doc.chunks.slice(i, i + request));
        if (titleFirst && requests.length > 0) requests[0] = [doc.title, ...requests[0]!];
        else await submit([doc.title]);
        // `depth` requests of the document in flight; answers are taken in order, as the step saves them.
        let sent = 0;
        const inFlight: Promise<Float32Array>[] = [];
        while (sent < requests.length || inFlight.length > 0) {
          while (sent < requests.length && inFlight.length < depth) inFlight.push(submit(requests[sent++]!));
          await inFlight.shift();
        }
      }
    };
    await Promise.all(Array.from({ length: callers }, step));
  };
}

/** CPU-ms the whole machine has been busy (every process), and in all. */
function machineCpu(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const { times: t } of cpus()) {
    busy += t.user + t.nice + t.sys + t.irq;
    total += t.user + t.nice + t.sys + t.irq + t.idle;
  }
  return { busy, total };
}

/** With --simulate: a model run that takes a fixed time per padded token and returns zeros (batching without the model). */
function simulatedRun(msPerThousand: number) {
  return async (batch: number[][]): Promise<Float32Array> => {
    const padded = batch.length * Math.max(...batch.map((ids) => ids.length));
    await new Promise((r) => setTimeout(r, (padded * msPerThousand) / 1000));
    return new Float32Array(batch.length * BGE_SMALL_EN_V15.dims);
  };
}

async function measure(name: string, feed: Feed, encoder: SentenceEncoder, limits: BatchLimits): Promise<void> {
  const run = args.simulate ? simulatedRun(Number(args.simulate)) : (batch: number[][]) => encoder.embedBatch(batch);
  const stats: RunStats = { runs: 0, texts: 0, tokens: 0, padded: 0 };
  const scheduler = new EmbedScheduler(
    (batch) => {
      stats.runs++;
      stats.texts += batch.length;
      stats.tokens += batch.reduce((n, ids) => n + ids.length, 0);
      stats.padded += batch.length * Math.max(...batch.map((ids) => ids.length));
      return run(batch);
    },
    BGE_SMALL_EN_V15.dims,
    limits,
  );
  const submit = (texts: string[]) => scheduler.submit(texts.map((t) => encoder.tokenize(t)));
  const load = loadavg()[0]!;
  const machine = machineCpu();
  const cpu = process.cpuUsage();
  const start = performance.now();
  await feed(submit);
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  const after = machineCpu();
  const machineCores = (availableParallelism() * (after.busy - machine.busy)) / Math.max(1, after.total - machine.total);
  console.log(
    `${name.padEnd(44)} | ${(stats.texts / seconds).toFixed(1).padStart(7)} | ${((1000 * cpuSeconds) / stats.texts).toFixed(2).padStart(6)} | ` +
      `${(cpuSeconds / seconds).toFixed(2).padStart(5)} | ${String(stats.runs).padStart(5)} | ${(stats.texts / stats.runs).toFixed(1).padStart(5)} | ` +
      `${((100 * (stats.padded - stats.tokens)) / stats.padded).toFixed(1).padStart(5)}% | ${Math.max(0, machineCores - cpuSeconds / seconds).toFixed(2).padStart(6)} | ${load.toFixed(2)}`,
  );
}

const docs = await corpusTexts(Number(args.pdfs), Number(args.docx));
const files = locateModelFiles(BGE_SMALL_EN_V15);
const encoder = await SentenceEncoder.load({ files, spec: BGE_SMALL_EN_V15, threads: Number(args.threads) });
const limits: BatchLimits = { maxTexts: Number(args['batch-texts']), maxTokens: Number(args['batch-tokens']), window: Number(args.window) };
const texts = docs.reduce((n, d) => n + 1 + d.chunks.length, 0);
const callers = Number(args.callers);
const request = Number(args.request);
const depth = Number(args.depth);
if (args.title !== 'first' && args.title !== 'alone') throw new Error(`--title first|alone, got ${args.title}`);
const titleFirst = args.title === 'first';
console.log(
  `${docs.length} documents, ${texts} texts; batches of at most ${limits.maxTexts} texts and ${limits.maxTokens} padded tokens, window ${limits.window}; ` +
    `${args.threads} threads, ${availableParallelism()} CPUs`,
);
await encoder.embedBatch([encoder.tokenize('warm up')]);
console.log(`${'shape'.padEnd(44)} | texts/s | CPU-ms | cores |  runs | texts |  pad   | others | load`);
const shapes: Record<string, [string, Feed]> = {
  limit: [`calls of ${CALL}, one at a time (the limit)`, limitShape(docs)],
  ingest: [`${callers} steps, requests of ${request}, depth ${depth}, title ${titleFirst ? 'first' : 'alone'}`, ingestShape(docs, callers, request, depth, titleFirst)],
};
for (let r = 0; r < Number(args.repeat); r++) {
  for (const shape of args.shapes.split(',')) {
    const [name, feed] = shapes[shape] ?? [];
    if (!feed) throw new Error(`unknown shape ${shape}: limit or ingest`);
    await measure(name!, feed, encoder, limits);
  }
}
