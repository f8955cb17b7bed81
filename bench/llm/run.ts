/**
 * Built-in chat model benchmark (prints numbers; not a timed test).
 *
 *   npx tsx bench/llm/run.ts [--runs 5] [--tokens 128]
 *
 * SmolLM2-135M-Instruct (Q4_1 GGUF) on node-llama-cpp's CPU build, greedy decoding:
 *  1. node-llama-cpp alone, one sequence, on 1 and 2 threads: prompt tokens/s (a 1,000-token prompt
 *     evaluated in batches) and generated tokens/s (one token per step).
 *  2. Time to first token for a 1,000-token prompt, and for a short question, with node-llama-cpp
 *     alone (LlamaChat in this thread) and through Cairn's client (BuiltinChatModel: its worker
 *     thread, messages, chat template, streaming); "added" is Cairn minus node-llama-cpp at the median.
 *  3. Concurrency through Cairn's client: 1, 2 and 4 simultaneous requests with 2 sequences (the
 *     default) and with 1 (a plain queue), 1 and 2 threads: aggregate and per-request tokens/s.
 *  4. The event loop's delay while Cairn generates, and the memory the default configuration reports.
 * Every prompt starts with a run number so no run reuses another's KV cache.
 */
import { availableParallelism, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { argument, percentile } from '../common.js';
import { BuiltinChatModel, builtinChatModel } from '../../src/models/builtin/chat-model.js';
import { disposeChatWorker } from '../../src/models/builtin/chat-host.js';
import { locateChatModelFile } from '../../src/models/builtin/locate.js';
import { SMOLLM2_135M_INSTRUCT } from '../../src/models/builtin/spec.js';
import type { ChatMessage } from '../../src/models/types.js';

const RUNS = Number(argument('runs', '5'));
const TOKENS = Number(argument('tokens', '128'));
const PROMPT_TOKENS = 1000;

const median = (xs: number[]) => percentile(xs, 50);
const ms = (x: number) => `${Math.round(x)} ms`;
const rate = (x: number) => `${x.toFixed(0)} tok/s`;

const TEXT =
  'Cairns are human-made piles of stones. Hikers build them to mark trails across open ground where a path is hard to see, ' +
  'on mountain ridges, in deserts and on tundra. Some cairns are thousands of years old and mark graves or boundaries; ' +
  'others are rebuilt every spring by volunteers after the winter storms. The hut logbook records the weather every morning, ' +
  'the temperature, the wind speed and the state of the path, so that the next party knows what to expect. ';

async function main() {
  const file = locateChatModelFile(SMOLLM2_135M_INSTRUCT);
  const { getLlama, JinjaTemplateChatWrapper, LlamaChat, LlamaLogLevel } = await import('node-llama-cpp');
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: file, gpuLayers: 0 });
  const tokens = model.tokenize(TEXT.repeat(Math.ceil((PROMPT_TOKENS * 6) / TEXT.length)));
  const longText = model.detokenize(tokens.slice(0, PROMPT_TOKENS - 30));
  const longQuestion = (run: number) => `Run ${run}. ${longText}\n\nWhat do hikers use cairns for?`;
  const shortQuestion = (run: number) => `Run ${run}. What do hikers use cairns for? Answer in two sentences.`;
  const template = model.fileInfo.metadata.tokenizer?.chat_template as string;

  console.log(`built-in chat model: ${SMOLLM2_135M_INSTRUCT.name} (${(model.size / 1e6).toFixed(0)} MB), node-llama-cpp CPU build`);
  console.log(`${availableParallelism()} CPUs, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}; ${RUNS} runs, ${TOKENS} generated tokens\n`);

  // 1. node-llama-cpp alone: prompt and generation throughput.
  console.log('1. node-llama-cpp alone, one sequence (median)');
  for (const threads of [1, 2]) {
    const context = await model.createContext({ contextSize: 2048, sequences: 1, threads, batchSize: 128 });
    const sequence = context.getSequence();
    const prompt: number[] = [];
    const generate: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      await sequence.clearHistory();
      const input = model.tokenize(longQuestion(run));
      let t = performance.now();
      await sequence.evaluateWithoutGeneratingNewTokens(input.slice(0, -1));
      prompt.push(((input.length - 1) / (performance.now() - t)) * 1000);
      // One token per step; an end-of-generation token does not end the measurement.
      t = performance.now();
      let n = 0;
      let last = input.at(-1)!;
      while (n < TOKENS) {
        const before = n;
        for await (const token of sequence.evaluate([last], { temperature: 0, yieldEogToken: true })) {
          last = token;
          if (++n >= TOKENS) break;
        }
        if (n === before) break;
      }
      generate.push((n / (performance.now() - t)) * 1000);
    }
    console.log(`   ${threads} thread${threads > 1 ? 's' : ' '}: prompt ${rate(median(prompt))} (${PROMPT_TOKENS}-token prompt), generation ${rate(median(generate))}`);
    await context.dispose();
  }

  // 2. Time to first token: node-llama-cpp alone vs through Cairn's client, same settings.
  console.log('\n2. time to first token and whole answer, 1 thread (median): node-llama-cpp alone vs Cairn');
  const context = await model.createContext({ contextSize: 2048, sequences: 1, threads: 1, batchSize: 128 });
  const raw = new LlamaChat({ contextSequence: context.getSequence(), chatWrapper: new JinjaTemplateChatWrapper({ template, tokenizer: model.tokenizer }) });
  const cairn = new BuiltinChatModel({ settings: { contextSize: 2048, parallel: 1, threads: 1 } });
  await cairn.verify();
  const delays = { p99: [] as number[], max: [] as number[] };
  for (const [label, question, maxTokens] of [
    [`${PROMPT_TOKENS}-token prompt`, longQuestion, 1],
    ['short question', shortQuestion, TOKENS],
  ] as const) {
    const timings = { raw: { first: [] as number[], total: [] as number[] }, cairn: { first: [] as number[], total: [] as number[] } };
    for (let run = 0; run < RUNS; run++) {
      const q = question(run + 100);
      let t = performance.now();
      let first = NaN;
      await raw.generateResponse(
        [{ type: 'system', text: SMOLLM2_135M_INSTRUCT.defaultSystemPrompt }, { type: 'user', text: q }],
        { temperature: 0, maxTokens, onTextChunk: () => (first = Number.isNaN(first) ? performance.now() - t : first) },
      );
      timings.raw.first.push(first);
      timings.raw.total.push(performance.now() - t);

      const messages: ChatMessage[] = [{ role: 'user', content: question(run + 200) }];
      const delay = monitorEventLoopDelay({ resolution: 1 });
      delay.enable();
      t = performance.now();
      first = NaN;
      for await (const d of cairn.stream(messages, { temperature: 0, max_tokens: maxTokens })) if (d.kind === 'answer' && Number.isNaN(first)) first = performance.now() - t;
      timings.cairn.total.push(performance.now() - t);
      delay.disable();
      delays.p99.push(delay.percentile(99) / 1e6);
      delays.max.push(delay.max / 1e6);
      timings.cairn.first.push(first);
    }
    const [rf, cf, rt, ct] = [median(timings.raw.first), median(timings.cairn.first), median(timings.raw.total), median(timings.cairn.total)];
    console.log(`   ${label}: first token ${ms(rf)} alone, ${ms(cf)} via Cairn (added ${ms(cf - rf)})` + (maxTokens > 1 ? `; whole answer ${ms(rt)} alone, ${ms(ct)} via Cairn (added ${ms(ct - rt)})` : ''));
  }
  console.log(`   event loop while Cairn generated: p99 delay ${Math.max(...delays.p99).toFixed(1)} ms, max ${Math.max(...delays.max).toFixed(1)} ms`);
  await context.dispose();
  await model.dispose();

  // 3. Concurrency through Cairn's client.
  console.log(`\n3. concurrent requests through Cairn (short question, up to ${TOKENS} tokens; median of ${RUNS} rounds)`);
  for (const { parallel, threads } of [
    { parallel: 1, threads: 1 },
    { parallel: 2, threads: 1 },
    { parallel: 2, threads: 2 },
  ]) {
    const m = new BuiltinChatModel({ settings: { contextSize: 2048, parallel, threads } });
    await m.verify();
    const cells: string[] = [];
    for (const concurrent of [1, 2, 4]) {
      const aggregate: number[] = [];
      const perRequest: number[] = [];
      const firsts: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        const t = performance.now();
        const results = await Promise.all(
          Array.from({ length: concurrent }, async (_, i) => {
            let first = NaN;
            let completion = 0;
            for await (const d of m.stream([{ role: 'user', content: shortQuestion(1000 + run * 10 + i) }], { temperature: 0, max_tokens: TOKENS })) {
              if (d.kind === 'answer' && Number.isNaN(first)) first = performance.now() - t;
              if (d.kind === 'usage') completion = d.usage.completion_tokens;
            }
            return { first, completion, total: performance.now() - t };
          }),
        );
        const wall = performance.now() - t;
        aggregate.push((results.reduce((n, r) => n + r.completion, 0) / wall) * 1000);
        perRequest.push(median(results.map((r) => (r.completion / r.total) * 1000)));
        firsts.push(Math.max(...results.map((r) => r.first)));
      }
      cells.push(`${concurrent}: ${rate(median(aggregate))} total, ${rate(median(perRequest))} each, last first token ${ms(median(firsts))}`);
    }
    console.log(`   parallel ${parallel}, ${threads} thread${threads > 1 ? 's' : ' '} | ${cells.join(' | ')}`);
  }

  // 4. Memory of the default configuration (what healthz reports).
  const def = builtinChatModel();
  await def.verify();
  const s = def.status();
  console.log(`\n4. default configuration: context ${s.context_size} tokens x ${s.parallel} sequences, ${s.threads} thread(s): ${(s.memory_bytes / 1e6).toFixed(0)} MB (weights + KV cache + buffers)`);
  await disposeChatWorker();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
