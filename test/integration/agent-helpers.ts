import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Api } from './client.js';
import { postSse, type SseResult } from './chat-helpers.js';

type Params = Record<string, unknown>;

/** A canvas from `[id, component_name, params, downstream]` rows; the first row must be `begin`. */
export function canvas(rows: [string, string, Params, string[]][], extra: Record<string, unknown> = {}) {
  const components: Record<string, unknown> = {};
  for (const [id, name, params, downstream] of rows) {
    const upstream = rows.filter((r) => r[3].includes(id)).map((r) => r[0]);
    components[id] = { obj: { component_name: name, params }, downstream, upstream };
  }
  return { components, globals: {}, history: [], path: [], retrieval: [], graph: { nodes: rows.map(([id]) => ({ id, data: { name: `node ${id}` } })), edges: [] }, ...extra };
}

/** Begin → LLM → Message: the smallest agent that answers with a model. */
export function llmCanvas(llmParams: Params = {}, beginParams: Params = {}) {
  return canvas([
    ['begin', 'Begin', { mode: 'conversational', prologue: 'Hi, I am an agent.', ...beginParams }, ['LLM:Answer']],
    ['LLM:Answer', 'LLM', { sys_prompt: 'Be brief.', prompts: [{ role: 'user', content: '{sys.query}' }], ...llmParams }, ['Message:Out']],
    ['Message:Out', 'Message', { content: ['{LLM:Answer@content}'] }, []],
  ]);
}

/** Begin → UserFillUp (one required line, `answer`) → LLM answering it → Message: a turn that pauses for the user. */
export function userFillUpCanvas() {
  return canvas([
    ['begin', 'Begin', { mode: 'conversational', prologue: 'Hello.' }, ['UserFillUp:Ask']],
    ['UserFillUp:Ask', 'UserFillUp', { enable_tips: true, tips: 'Go on?', inputs: { answer: { name: 'answer', type: 'line', optional: false } } }, ['LLM:Answer']],
    ['LLM:Answer', 'LLM', { sys_prompt: 'Be brief.', prompts: [{ role: 'user', content: '{UserFillUp:Ask@answer}' }] }, ['Message:Out']],
    ['Message:Out', 'Message', { content: ['{LLM:Answer@content}'] }, []],
  ]);
}

export function fixture(name: string): Record<string, any> {
  return JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'agents', `${name}.json`), 'utf8'));
}

let seq = 0;

export async function createAgent(api: Api, dsl: unknown, title = `agent-${process.pid}-${++seq}`): Promise<string> {
  const res = await api.post('/agents', { title, dsl });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data.id;
}

/** Runs a turn and reads the whole event stream. */
export async function runStream(api: Api, body: Record<string, unknown>): Promise<SseResult & { events: any[] }> {
  const res = await postSse(api, '/agents/chat/completions', { stream: true, ...body });
  assert.equal(res.status, 200, res.raw);
  assert.equal(res.frames.at(-1), '[DONE]', 'the stream ends with [DONE]');
  return { ...res, events: res.frames.filter((f) => f !== '[DONE]') };
}

/** The text of a stream's message deltas. */
export function streamedText(events: any[]): string {
  return events.filter((e) => e.event === 'message').map((e) => e.data.content ?? '').join('');
}

/** Begin → Message with a fixed template: a canvas that answers without any model. */
export function messageCanvas(text: string, beginParams: Params = {}) {
  return canvas([
    ['begin', 'Begin', { mode: 'conversational', prologue: 'Hello.', ...beginParams }, ['Message:Out']],
    ['Message:Out', 'Message', { content: [text] }, []],
  ]);
}
