import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { newUser, type Api } from './client.js';
import { createChat, parsedDataset } from './chat-helpers.js';

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures', 'grounded');
const DOCUMENTS = Object.fromEntries(['trail-guide.md', 'stove-sheet.md', 'club-rules.md'].map((f) => [f, fs.readFileSync(path.join(FIXTURES, f), 'utf8')]));
const QUESTIONS: { question: string; answer: string }[] = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'questions.json'), 'utf8'));
const CORPUS = Object.values(DOCUMENTS).join('\n');

/** Checked here independently of src/chat/grounding.ts: every number the answer states is one the documents state. */
const numbers = (text: string) => (text.replace(/\[ID:\d+\]/g, '').match(/\d+(?:[.,]\d+)*/g) ?? []).map((n) => n.replace(/,/g, ''));
const CORPUS_NUMBERS = new Set(numbers(CORPUS));
/** …and every capitalised word past a sentence's start is a word of the documents (a possessive's name: "Feshie's"). */
function names(text: string): string[] {
  return text
    .replace(/\[ID:\d+\]/g, '')
    .split(/(?<=[.!?:"])\s+/)
    .flatMap((s) => (s.match(/\p{L}[\p{L}'-]*/gu) ?? []).slice(1).filter((w) => /^\p{Lu}/u.test(w) && w !== 'I'))
    .map((w) => w.replace(/'s$/, ''));
}
const CORPUS_WORDS = new Set((CORPUS.toLowerCase().match(/\p{L}+/gu) ?? []));

/*
 * A grounded question set over HTTP, as a new user gets it: no provider, so the chat answers with the built-in
 * models (SmolLM2-135M-Instruct and the built-in embedder) and the grounding check is on by default.
 */
describe('grounded answers on the built-in models: a question set with known answers', function () {
  this.timeout(900_000);
  let api: Api;
  let chatId: string;

  before(async function () {
    this.timeout(300_000);
    ({ api } = await newUser('grounded-questions'));
    const { id } = await parsedDataset(api, `grounded-${process.pid}`, DOCUMENTS);
    chatId = (await createChat(api, { name: `grounded-${process.pid}`, dataset_ids: [id] })).id;
  });

  it('no answer states a figure or a name the documents do not, and at least 80% state the right one', async () => {
    const wrong: string[] = [];
    let right = 0;
    let sentences = 0;
    let replaced = 0;
    let ms = 0;
    for (const { question, answer: expected } of QUESTIONS) {
      const started = Date.now();
      const res = await api.post('/chat/completions', { chat_id: chatId, stream: false, messages: [{ role: 'user', content: question }] });
      ms += Date.now() - started;
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const { answer, reference } = res.body.data as { answer: string; reference: { grounding?: { checked: boolean; replaced: unknown[] } } };
      assert.equal(reference.grounding?.checked, true, 'the check is on by default for the built-in model');
      const badNumbers = numbers(answer).filter((n) => !CORPUS_NUMBERS.has(n));
      const badNames = names(answer).filter((n) => !CORPUS_WORDS.has(n.toLowerCase()));
      const ok = answer.includes(expected);
      if (badNumbers.length || badNames.length) wrong.push(`${question} -> ${answer} (not in the documents: ${[...badNumbers, ...badNames].join(', ')})`);
      if (ok) right++;
      const shownSentences = answer.split(/(?<=[.!?])\s+/).filter((s) => s.trim()).length;
      replaced += reference.grounding!.replaced.length;
      sentences += shownSentences + reference.grounding!.replaced.filter((r: any) => !r.replacement).length;
      console.log(`      ${ok ? 'right' : 'missed'}: ${question} -> ${JSON.stringify(answer.slice(0, 200))}`);
    }
    console.log(`      ${right}/${QUESTIONS.length} right; ${replaced} of ${sentences} sentences replaced or dropped; ${(ms / QUESTIONS.length / 1000).toFixed(1)} s an answer`);
    assert.deepEqual(wrong, [], 'no answer states a wrong figure or name');
    assert.ok(right >= Math.ceil(QUESTIONS.length * 0.8), `${right} of ${QUESTIONS.length} answers state the right figure or name`);
  });
});
