import assert from 'node:assert/strict';
import { ChatEngine, disposeLlamaRuntime } from '../../../src/models/builtin/chat-engine.js';
import { builtinChatModel, chatHistory } from '../../../src/models/builtin/chat-model.js';
import { toolInstructions, toolReplySchema } from '../../../src/models/builtin/chat-json.js';
import type { GenerateRequest } from '../../../src/models/builtin/chat-protocol.js';
import { builtinModelSettings } from '../../../src/models/builtin/settings.js';
import { RepetitionGuard, endsInLoop } from '../../../src/models/builtin/repetition.js';
import { SMOLLM2_135M_INSTRUCT } from '../../../src/models/builtin/spec.js';
import type { ChatMessage, ToolSpec } from '../../../src/models/types.js';

describe('models/builtin repetition: a generation that loops is cut', () => {
  it('a sentence, a short piece or one character repeated over 100 characters at the end is a loop', () => {
    const sentence = 'The answer is: The Corrie hut sleeps twelve people. ';
    assert.equal(endsInLoop(`It has no warden. ${sentence.repeat(3)}`), true);
    assert.equal(endsInLoop(`999, ${'11:11:11, '.repeat(10)}`), true);
    assert.equal(endsInLoop(`999${'9'.repeat(100)}`), true);
  });

  it('ordinary text, two copies of a sentence, or a short run is not', () => {
    assert.equal(endsInLoop('In a mountain emergency, call 999 and ask for the police, then mountain rescue. Give your location.'), false);
    assert.equal(endsInLoop('The hut sleeps twelve people. The hut sleeps twelve people. '), false);
    assert.equal(endsInLoop(`| a | b | c |\n| --- | --- | --- |\n${'.'.repeat(20)}`), false);
    assert.equal(endsInLoop(''), false);
  });

  it('the guard spots a loop as the text arrives chunk by chunk, however long the text before it', () => {
    const guard = new RepetitionGuard();
    const prose = 'Granite cairns mark the trail crossings; volunteers rebuild them each spring. ';
    for (let i = 0; i < 50; i++) assert.equal(guard.push(`${prose.slice(0, 40)}${i} ${prose.slice(40)}`), false);
    const loop = 'Call 999. The answer is yes. ';
    const verdicts = [...loop.repeat(5)].map((c) => guard.push(c));
    assert.equal(verdicts.at(-1), true);
    assert.ok(verdicts.indexOf(true) <= 4 * loop.length, `seen after ${verdicts.indexOf(true)} characters`);
  });
});

/*
 * The real model (SmolLM2-135M-Instruct, node-llama-cpp): the dataset chatbot's answer round, a
 * question and two passages, on which it loops "The answer is: <passage>" until max_tokens when it
 * generates without a repetition penalty.
 */
describe('models/builtin repetition: the real model stops repeating itself', function () {
  this.timeout(180_000);

  const tool: ToolSpec = { name: 'search_my_dateset', description: 'Searches the datasets.', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } };
  const question = 'What number should I call in a mountain emergency?';
  const passages = [
    '\nID: 0\n├── Title: safety.md\n└── Content:\nIn a mountain emergency, call 999 and ask for the police, then mountain rescue. Give your location and the number of people in your group.',
    '\nID: 1\n├── Title: huts.md\n└── Content:\nThe Corrie hut sleeps twelve people. It has no warden in winter; bring a stove and fuel.',
  ].join('\n');
  const messages: ChatMessage[] = [
    { role: 'system', content: 'Answer only with what the passages say. Cite each passage you use as [ID:n].' },
    { role: 'user', content: question },
    { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: tool.name, arguments: JSON.stringify({ query: question }) }] },
    { role: 'tool', tool_call_id: 'call_1', content: passages },
  ];
  const MAX_TOKENS = 300;

  it('without a repetition penalty the model loops, and the engine cuts the loop long before max_tokens', async () => {
    const engine = new ChatEngine({ spec: SMOLLM2_135M_INSTRUCT, ...builtinModelSettings().chat, parallel: 1 });
    try {
      const request: GenerateRequest = {
        history: chatHistory(messages, SMOLLM2_135M_INSTRUCT, toolInstructions([tool])),
        sampling: { maxTokens: MAX_TOKENS, temperature: 0.2, seed: 1 },
        schema: toolReplySchema([]),
      };
      const streamed: string[] = [];
      const { text, usage } = await engine.generate(request, (_kind, t) => streamed.push(t), new AbortController().signal);
      assert.equal(streamed.join(''), text, 'what streamed is what was returned');
      assert.ok(usage.completion_tokens < MAX_TOKENS / 2, `stopped after ${usage.completion_tokens} tokens: ${text}`);
      assert.ok(endsInLoop(text), `it was a loop: ${text}`);
    } finally {
      await engine.dispose();
      await disposeLlamaRuntime();
    }
  });

  it('with the defaults (repetition penalty, no max_tokens given) the answer ends by itself without a loop', async () => {
    const model = builtinChatModel();
    for (const seed of [1, 2, 3]) {
      let answer = '';
      let completion = 0;
      for await (const d of model.stream(messages, { temperature: 0.2, seed, tools: [tool] })) {
        if (d.kind === 'answer') answer += d.text;
        if (d.kind === 'usage') completion = d.usage.completion_tokens;
      }
      assert.ok(answer.trim().length > 0, 'an answer');
      assert.ok(completion < 150, `seed ${seed}: ${completion} tokens: ${answer}`);
      assert.ok(!/(.{20,}?)\1\1/s.test(answer), `seed ${seed}: no sentence three times: ${answer}`);
    }
  });
});
