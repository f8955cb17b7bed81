/**
 * Built-in embedding model throughput: embeddings per second for texts of 32, 128 and 256 tokens
 * ([CLS]/[SEP] included; 256 is the model's maximum), with 1 and 2 ONNX Runtime threads.
 *
 *   npx tsx bench/embed/run.ts [--seconds 4]
 */
import { availableParallelism, loadavg } from 'node:os';
import { BuiltinEmbeddingModel } from '../../src/models/builtin/embedding-model.js';
import { loadTokenizer } from '../../src/models/builtin/encoder.js';
import { locateModelFiles } from '../../src/models/builtin/locate.js';
import { MINILM_L6_V2 } from '../../src/models/builtin/spec.js';

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

const files = locateModelFiles(MINILM_L6_V2);
const tokenizer = await loadTokenizer(files.tokenizer);
const corpora = new Map(LENGTHS.map((n) => [n, Array.from({ length: BATCH * 8 }, (_, i) => makeText(n, i + 1))]));
for (const [n, texts] of corpora) {
  const lengths = texts.map((t) => (tokenizer.encode(t) as number[]).length);
  if (lengths.some((l) => l !== n)) throw new Error(`texts for ${n} tokens have ${Math.min(...lengths)}..${Math.max(...lengths)} tokens`);
}

console.log(
  `built-in model ${MINILM_L6_V2.name} (int8 ONNX), batch ${BATCH}, ${seconds} s per cell, ` +
    `${availableParallelism()} CPUs, load average ${loadavg()[0]!.toFixed(2)} (other work on the machine skews the numbers)`,
);
console.log('threads | tokens/text | embeddings/s | ms per 32 texts | tokens/s');
console.log('------- | ----------- | ------------ | --------------- | --------');
for (const threads of [1, 2]) {
  const model = new BuiltinEmbeddingModel({ threads, files });
  for (const n of LENGTHS) {
    const { perSecond, msPer32 } = await measure(model, corpora.get(n)!);
    console.log(
      `${String(threads).padStart(7)} | ${String(n).padStart(11)} | ${perSecond.toFixed(1).padStart(12)} | ${msPer32.toFixed(1).padStart(15)} | ${Math.round(perSecond * n).toString().padStart(8)}`,
    );
  }
}

// Retrieval embeds one question per request; it must not wait for a whole ingestion request.
const model = new BuiltinEmbeddingModel({ files });
const question = 'what are the side effects of vitamin d supplements?';
await model.embed([question]);
const idle: number[] = [];
for (let i = 0; i < 10; i++) {
  const t = performance.now();
  await model.embed([question]);
  idle.push(performance.now() - t);
}
const bulk = model.embed(corpora.get(256)!.slice(0, 64));
await new Promise((r) => setTimeout(r, 100));
const t = performance.now();
await model.embed([question]);
const busy = performance.now() - t;
await bulk;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`\nsingle-query latency: ${median(idle).toFixed(1)} ms idle (median of 10), ${busy.toFixed(0)} ms while a 64 x 256-token request runs`);
