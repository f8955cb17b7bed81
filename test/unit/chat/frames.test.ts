import assert from 'node:assert/strict';
import type { FinalEvent, TurnEvent } from '../../../src/chat/events.js';
import { DONE_FRAME, errorFrame, MessageFrames, type AnswerData } from '../../../src/chat/message-frames.js';
import { OpenAIChunks, openAIError } from '../../../src/chat/openai-frames.js';
import { emptyReference } from '../../../src/chat/references.js';

const ids = { id: 't1', session_id: 's1', chat_id: 'c1' };
const reference = { chunks: [], doc_aggs: [{ doc_name: 'a.txt', doc_id: 'd1', count: 1 }], total: 1 };
const final: FinalEvent = { type: 'final', answer: 'Hello world', reasoning: 'Think hard', reference, prompt: 'SYS', messages: [{ role: 'user', content: 'hi' }] };
const events: TurnEvent[] = [
  { type: 'reasoning', delta: 'Think', text: 'Think' },
  { type: 'reasoning', delta: ' hard', text: 'Think hard' },
  { type: 'answer', delta: 'Hello', text: 'Hello' },
  { type: 'answer', delta: ' world', text: 'Hello world' },
  final,
];

function dataOf(frames: MessageFrames, evs: TurnEvent[]): Partial<AnswerData>[] {
  return evs.flatMap((ev) => frames.frames(ev)).map((f) => f.data as AnswerData);
}

describe('conversation Message frames', () => {
  it('carry the cumulative answer and reasoning apart, framed by think markers, references on the final frame', () => {
    const data = dataOf(new MessageFrames(ids, false, 100), events);
    assert.deepEqual(
      data.map((d) => [d.answer, d.reasoning, d.start_to_think ?? d.end_to_think ?? d.final]),
      [
        ['', '', true],
        ['', 'Think', false],
        ['', 'Think hard', false],
        ['', 'Think hard', true],
        ['Hello', 'Think hard', false],
        ['Hello world', 'Think hard', false],
        ['Hello world', 'Think hard', true],
      ],
    );
    assert.ok(data[3]!.end_to_think);
    assert.deepEqual(data.slice(0, -1).map((d) => d.reference), Array(6).fill({}));
    const last = data.at(-1)!;
    assert.deepEqual(last.reference, reference);
    assert.equal(last.prompt, 'SYS');
    assert.deepEqual([last.id, last.session_id, last.chat_id, last.created_at], ['t1', 's1', 'c1', 100]);
  });

  it('legacy mode inlines the reasoning as <think>…</think> in the answer, without markers', () => {
    const data = dataOf(new MessageFrames(ids, true), events);
    assert.deepEqual(data.map((d) => d.answer), ['<think>Think', '<think>Think hard', '<think>Think hard</think>Hello', '<think>Think hard</think>Hello world', '<think>Think hard</think>Hello world']);
    assert.ok(data.every((d) => d.reasoning === undefined && !d.start_to_think && !d.end_to_think));
  });

  it('an answer without reasoning has no reasoning key nor markers', () => {
    const data = dataOf(new MessageFrames(ids, false), [{ type: 'answer', delta: 'A', text: 'A' }, { ...final, answer: 'A', reasoning: '' }]);
    assert.deepEqual(data.map((d) => Object.hasOwn(d, 'reasoning')), [false, false]);
    assert.equal(data.length, 2);
  });

  it('the whole answer of a non-streamed turn is the final frame', () => {
    const whole = new MessageFrames(ids, false).whole(final);
    assert.equal(whole.answer, 'Hello world');
    assert.equal(whole.reasoning, 'Think hard');
    assert.equal(whole.final, true);
  });

  it('errors and the end sentinel', () => {
    assert.deepEqual(errorFrame(500, 'boom'), { code: 500, message: 'boom', data: { answer: '**ERROR**: boom', reference: [] } });
    assert.deepEqual(DONE_FRAME, { code: 0, message: '', data: true });
  });
});

describe('OpenAI chunks', () => {
  const base = { id: 'chatcmpl-x', model: 'model', created: 5 };

  it('stream increments; the first carries the role; the last has finish_reason, usage, final_content and references', () => {
    const chunks = new OpenAIChunks(base, true);
    const out = events.map((ev) => chunks.chunk(ev));
    assert.deepEqual(out.map((c) => c.choices[0]!.delta), [
      { role: 'assistant', content: null, reasoning_content: 'Think' },
      { content: null, reasoning_content: ' hard' },
      { content: 'Hello' },
      { content: ' world' },
      { content: null, final_content: 'Hello world', reference: [] },
    ]);
    assert.ok(out.every((c) => c.object === 'chat.completion.chunk' && c.id === 'chatcmpl-x' && c.model === 'model'));
    assert.deepEqual(out.map((c) => c.choices[0]!.finish_reason), [null, null, null, null, 'stop']);
    assert.equal(out.at(-1)!.usage!.completion_tokens, 4);
  });

  it('leaves references out unless asked', () => {
    const chunks = new OpenAIChunks(base, false);
    assert.equal(Object.hasOwn(chunks.chunk(final).choices[0]!.delta, 'reference'), false);
    assert.equal(Object.hasOwn(chunks.completion(final).choices[0]!.message, 'reference'), false);
  });

  it('a whole completion', () => {
    const body = new OpenAIChunks(base, true).completion({ ...final, reference: emptyReference() });
    assert.equal(body.object, 'chat.completion');
    assert.deepEqual(body.choices[0]!.message, { role: 'assistant', content: 'Hello world', reasoning_content: 'Think hard', reference: [] });
    assert.equal(body.choices[0]!.finish_reason, 'stop');
    assert.equal(body.usage.total_tokens, body.usage.prompt_tokens + body.usage.completion_tokens);
  });

  it('errors in the OpenAI shape', () => {
    assert.deepEqual(openAIError('nope', 404), { error: { message: 'nope', type: 'not_found_error', param: null, code: '404' } });
  });
});
