import assert from 'node:assert/strict';
import { AnswerStreamer, closeJson, parseToolReply, toGrammarSchema, toolCallsText, toolReplySchema, toolsLeft } from '../../../src/models/builtin/chat-json.js';
import { chatHistory } from '../../../src/models/builtin/chat-model.js';
import { SMOLLM2_135M_INSTRUCT } from '../../../src/models/builtin/spec.js';

describe('models/builtin chat JSON helpers (no model)', () => {
  describe('toGrammarSchema', () => {
    it('keeps what a grammar can enforce and rewrites the rest into node-llama-cpp terms', () => {
      const schema = toGrammarSchema({
        type: 'object',
        description: 'A city',
        properties: {
          name: { type: 'string', minLength: 1, pattern: '^[A-Z]' },
          population: { type: 'integer', minimum: 0 },
          kind: { anyOf: [{ const: 'town' }, { const: 'city' }] },
          tags: { type: 'array', items: { type: 'string' }, maxItems: 2 },
          founded: { type: 'string', format: 'date' },
          note: { type: ['string', 'null'] },
          extra: {},
          parent: { $ref: '#/definitions/ref' },
        },
        required: ['name'],
        definitions: { ref: { type: 'string', nullable: true } },
      });
      assert.deepEqual(schema, {
        type: 'object',
        description: 'A city',
        properties: {
          name: { type: 'string', minLength: 1 },
          population: { type: 'integer' },
          kind: { oneOf: [{ const: 'town' }, { const: 'city' }] },
          tags: { type: 'array', items: { type: 'string' }, maxItems: 2 },
          founded: { type: 'string', format: 'date' },
          note: { type: ['string', 'null'] },
          extra: toGrammarSchema({}),
          parent: { $ref: '#/$defs/ref' },
        },
        $defs: { ref: { oneOf: [{ type: 'string' }, { type: 'null' }] } },
      });
    });

    it('an object without properties takes any properties; a type list with object or array becomes oneOf', () => {
      assert.deepEqual(toGrammarSchema({ type: 'object' }), { type: 'object', additionalProperties: true });
      assert.deepEqual(toGrammarSchema({ type: 'object', properties: {}, additionalProperties: false }), { type: 'object', properties: {} });
      assert.deepEqual(toGrammarSchema({ type: ['object', 'null'], properties: { a: { type: 'number' } } }), {
        oneOf: [{ type: 'null' }, { type: 'object', properties: { a: { type: 'number' } } }],
      });
      assert.ok('oneOf' in toGrammarSchema(true), 'any value');
    });
  });

  describe('tool replies', () => {
    const tools = [{ name: 'search', description: 'Search.', parameters: { type: 'object', properties: { query: { type: 'string' } } } }];

    it('the reply schema allows one call to a named tool or an answer', () => {
      const schema = toolReplySchema(tools) as { oneOf: any[] };
      const call = schema.oneOf[0].properties.tool_calls;
      assert.equal(call.maxItems, 1);
      assert.deepEqual(call.items.properties.name, { const: 'search' });
      assert.deepEqual(call.items.properties.arguments, { type: 'object', properties: { query: { type: 'string', maxLength: 200 } } }, 'argument strings are bounded');
      assert.deepEqual(schema.oneOf[1], { type: 'object', properties: { answer: { type: 'string' } } });
    });

    it('each tool once per user turn: a tool that answered in this turn is not offered again; then only an answer', () => {
      const two = [...tools, { name: 'weather', description: 'Weather.', parameters: { type: 'object', properties: {} } }];
      const called = (name: string) => ({ role: 'assistant' as const, content: '', tool_calls: [{ id: 'c', name, arguments: '{}' }] });
      const result = { role: 'tool' as const, tool_call_id: 'c', content: 'r' };
      assert.deepEqual(toolsLeft(two, [{ role: 'user', content: 'q' }]).map((t) => t.name), ['search', 'weather']);
      assert.deepEqual(toolsLeft(two, [{ role: 'user', content: 'q' }, called('search'), result]).map((t) => t.name), ['weather']);
      assert.deepEqual(toolsLeft(two, [{ role: 'user', content: 'q' }, called('search'), result, { role: 'user', content: 'again' }]).length, 2, 'a new turn');
      assert.deepEqual(toolReplySchema([]), { type: 'object', properties: { answer: { type: 'string' } } });
    });

    it('a reply cut short by max_tokens is closed: a call keeps what its arguments got, an answer its text', () => {
      const cut = parseToolReply('{"tool_calls": [{"name": "search", "arguments": {"query": "cairns and tr');
      assert.ok(cut?.kind === 'tool_calls');
      assert.equal(cut.calls[0]!.arguments, '{"query":"cairns and tr"}');
      assert.deepEqual(parseToolReply('{"answer": "Cairns mark tr'), { kind: 'answer', text: 'Cairns mark tr' });
      assert.equal(closeJson('{"a": "x\\u00')[0], '{"a": "x"}', 'an unfinished escape is dropped');
      assert.equal(closeJson('[{"a": "q\\"')[0], '[{"a": "q\\""}]', 'an escaped quote does not end the string');
      assert.ok(closeJson('{"a": 1, "b').includes('{"a": 1}'), 'a dangling key is dropped');
      assert.deepEqual(closeJson('{"a": 1}'), [], 'nothing open');
      assert.equal(parseToolReply('{"tool_calls": [{"na'), undefined, 'no tool name: nothing to call');
      assert.equal(parseToolReply('{"tool_calls": [{"name": "sea', ['search']), undefined, 'a cut name is not a tool');
    });

    it('parses a call (id generated, arguments as JSON text) or an answer; anything else is undefined', () => {
      const reply = parseToolReply('{"tool_calls": [{"name": "search", "arguments": {"query": "cairns"}}]}');
      assert.equal(reply?.kind, 'tool_calls');
      if (reply?.kind !== 'tool_calls') return;
      assert.match(reply.calls[0]!.id, /^call_[0-9a-f]{24}$/);
      assert.deepEqual({ ...reply.calls[0], id: '' }, { id: '', name: 'search', arguments: '{"query":"cairns"}' });
      assert.deepEqual(parseToolReply('{"answer": "Hi"}'), { kind: 'answer', text: 'Hi' });
      assert.equal(parseToolReply('{"tool_calls": [{"name": "get_weather", "arguments": {}}]}', ['search']), undefined, 'not an offered tool');
      assert.equal(parseToolReply('{}'), undefined);
    });

    it('renders earlier calls in the reply format, and tool results as user turns naming the tool', () => {
      const calls = [{ id: 'c1', name: 'search', arguments: '{"query":"x"}' }];
      assert.equal(toolCallsText(calls), '{"tool_calls":[{"name":"search","arguments":{"query":"x"}}]}');
      const history = chatHistory(
        [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Find x.' },
          { role: 'assistant', content: '', tool_calls: calls },
          { role: 'tool', tool_call_id: 'c1', content: 'x is 1' },
        ],
        SMOLLM2_135M_INSTRUCT,
        'TOOLS',
      );
      assert.deepEqual(history, [
        { type: 'system', text: 'Be brief.\n\nTOOLS' },
        { type: 'user', text: 'Find x.' },
        { type: 'model', response: ['{"tool_calls":[{"name":"search","arguments":{"query":"x"}}]}'] },
        { type: 'user', text: 'Result of search:\nx is 1\n\nAnswer the question with this result.' },
      ]);
      assert.deepEqual(chatHistory([{ role: 'user', content: 'hi' }], SMOLLM2_135M_INSTRUCT)[0], { type: 'system', text: SMOLLM2_135M_INSTRUCT.defaultSystemPrompt });
    });
  });

  describe('AnswerStreamer', () => {
    const feed = (chunks: string[]) => {
      const s = new AnswerStreamer();
      const out = chunks.map((c) => s.push(c));
      return { out, emitted: s.emitted };
    };

    it('passes on the answer text as it arrives, escapes decoded, and stops at the closing quote', () => {
      const { out, emitted } = feed(['{', '"ans', 'wer": "', 'Hello', ', \\', 'n', 'wor', 'ld \\u00e9\\u', '00e8 \\"q\\"', '"}', '\n\n\n\n']);
      assert.deepEqual(out, ['', '', '', 'Hello', ', ', '\n', 'wor', 'ld é', 'è "q"', '', '']);
      assert.equal(emitted, 'Hello, \nworld éè "q"');
    });

    it('decodes surrogate pairs split across chunks', () => {
      assert.equal(feed(['{"answer":"a \\ud83d', '\\ude00 b"}']).emitted, 'a 😀 b');
    });

    it('passes on nothing for a tool call', () => {
      const { out } = feed(['{"tool_', 'calls": [{"name": "search", "arguments": {"query": "answer"}}]}']);
      assert.deepEqual(out, ['', '']);
    });
  });
});
