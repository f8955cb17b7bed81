/**
 * Built-in embedding models' throughput, side by side: embeddings per second for texts of 32, 128 and 256
 * tokens ([CLS]/[SEP] included; 256 is all-MiniLM-L6-v2's maximum), with 1 and 2 ONNX Runtime threads,
 * and each model's single-query latency.
 *
 *   npx tsx bench/embed/run.ts [--seconds 4]
 */
import { availableParallelism, loadavg } from 'node:os';
import { BuiltinEmbeddingModel } from '../../src/models/builtin/embedding-model.js';
import { loadTokenizer } from '../../src/models/builtin/encoder.js';
import { locateModelFiles } from '../../src/models/builtin/locate.js';
import { BUILTIN_EMBEDDING_SPECS, type BuiltinModelSpec } from '../../src/models/builtin/spec.js';

const seconds = Number(process.argv[process.argv.indexOf('--seconds') + 1]) || 4;
const LENGTHS = [32, 128, 256];
/** Texts per embed() call, as the ingestion activity sends them. */
const BATCH = 32;

// Common words that are single WordPiece tokens, so a text of n words is n tokens long.
const WORDS = (
  'the of and to in is was for on as with by he at from his an were are which this be or has had not ' +
  'but first one their its new after who they have her she two been other when there all during into ' +
  'school time may years more most only over city some world would where later up such used many can ' +
  'state about national out known university united then made team system water house game life'
).split(' ');

/** Deterministic pseudo-random text of `tokens` tokens in total. */
function makeText(tokens: number, seed: number): string {
  let x = seed * 2654435761;
  const words: string[] = [];
  for (let i = 0; i < tokens - 2; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    words.push(WORDS[x % WORDS.length]!);
  }
  return words.join(' ');
}

/** Embeds the corpus 32 texts per call, round-robin, for `seconds`; the first call also loads the model. */
async function measure(model: BuiltinEmbeddingModel, texts: string[]): Promise<{ perSecond: number; msPer32: number }> {
  await model.embed(texts.slice(0, BATCH));
  let done = 0;
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) {
    const offset = done % texts.length;
    await model.embed(texts.slice(offset, offset + BATCH));
    done += BATCH;
  }
  const elapsed = (performance.now() - start) / 1000;
  return { perSecond: done / elapsed, msPer32: (elapsed * 1000 * BATCH) / done };
}

const corpora = new Map(LENGTHS.map((n) => [n, Array.from({ length: BATCH * 8 }, (_, i) => makeText(n, i + 1))]));

/** Checks that each text is exactly its nominal length in the model's own tokens. */
async function checkLengths(spec: BuiltinModelSpec): Promise<void> {
  const tokenizer = await loadTokenizer(locateModelFiles(spec).tokenizer);
  for (const [n, texts] of corpora) {
    const lengths = texts.map((t) => (tokenizer.encode(t) as number[]).length);
    if (lengths.some((l) => l !== n)) throw new Error(`${spec.name}: texts for ${n} tokens have ${Math.min(...lengths)}..${Math.max(...lengths)} tokens`);
  }
}

/** Median time of one question embedded alone, idle and while a 64 x 256-token request runs. */
async function queryLatency(model: BuiltinEmbeddingModel): Promise<{ idle: number; busy: number }> {
  // Retrieval embeds one question per request; it must not wait for a whole ingestion request.
  const question = 'what are the side effects of vitamin d supplements?';
  await model.embed([question], 'query');
  const idle: number[] = [];
  for (let i = 0; i < 10; i++) {
    const t = performance.now();
    await model.embed([question], 'query');
    idle.push(performance.now() - t);
  }
  const bulk = model.embed(corpora.get(256)!.slice(0, 64));
  await new Promise((r) => setTimeout(r, 100));
  const t = performance.now();
  await model.embed([question], 'query');
  const busy = performance.now() - t;
  await bulk;
  return { idle: [...idle].sort((a, b) => a - b)[Math.floor(idle.length / 2)]!, busy };
}

console.log(
  `built-in models (int8 ONNX), batch ${BATCH}, ${seconds} s per cell, ` +
    `${availableParallelism()} CPUs, load average ${loadavg()[0]!.toFixed(2)} (other work on the machine skews the numbers)`,
);
console.log('model                  | threads | tokens/text | embeddings/s | ms per 32 texts | tokens/s');
console.log('---------------------- | ------- | ----------- | ------------ | --------------- | --------');
const latencies: string[] = [];
for (const spec of BUILTIN_EMBEDDING_SPECS) {
  await checkLengths(spec);
  const files = locateModelFiles(spec);
  const label = spec.name.split('/').pop()!.padEnd(22);
  for (const threads of [1, 2]) {
    const model = new BuiltinEmbeddingModel({ spec, threads, files });
    for (const n of LENGTHS) {
      const { perSecond, msPer32 } = await measure(model, corpora.get(n)!);
      console.log(
        `${label} | ${String(threads).padStart(7)} | ${String(n).padStart(11)} | ${perSecond.toFixed(1).padStart(12)} | ${msPer32.toFixed(1).padStart(15)} | ${Math.round(perSecond * n).toString().padStart(8)}`,
      );
    }
  }
  const { idle, busy } = await queryLatency(new BuiltinEmbeddingModel({ spec, files }));
  latencies.push(`${label} ${idle.toFixed(1)} ms idle (median of 10), ${busy.toFixed(0)} ms while a 64 x 256-token request runs`);
}
console.log('\nsingle-query latency:');
for (const line of latencies) console.log(`  ${line}`);
