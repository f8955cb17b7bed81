import assert from 'node:assert/strict';
import { fixedAnswer, startFakeOpenAI, type FakeOpenAI } from '../fakes/index.js';
import { newUser, type Api } from './client.js';
import { createChat, parsedDataset, postSse, userWithModel } from './chat-helpers.js';

const SAFETY = {
  'safety.md': [
    '# Mountain safety',
    'In a mountain emergency, call 999 and ask for the police, then mountain rescue.',
    'Give your location and the number of people in your group.',
  ].join('\n\n'),
};
const QUESTION = 'What number should I call in a mountain emergency?';

describe('grounded answers: figures and names the documents do not hold are not shown as fact', function () {
  this.timeout(300_000);

  describe('with a scripted remote model', () => {
    let fake: FakeOpenAI;
    let api: Api;
    let chatId: string;

    before(async function () {
      this.timeout(180_000);
      fake = await startFakeOpenAI();
      ({ api } = await userWithModel('grounding', fake.baseUrl));
      const { id } = await parsedDataset(api, `grounding-${process.pid}`, SAFETY);
      chatId = (await createChat(api, { name: 'grounded', dataset_ids: [id], prompt_config: { grounding_check: true } })).id;
      fake.behaviour = { ...fake.behaviour, answer: fixedAnswer('In a mountain emergency, call 911 at once. Ask for Hamish McTavish at the lodge. Stay with your group.'), tokenDelayMs: 2 };
    });
    after(() => fake.close());

    it('a wrong figure and a made-up name are replaced by the passage, the reference says what was replaced, and the stream stays cumulative', async () => {
      const { frames } = await postSse(api, `/chats/${chatId}/completions`, { question: QUESTION, stream: true });
      const answers = frames.filter((f) => f !== '[DONE]' && typeof f.data === 'object').map((f) => f.data.answer as string);
      for (let i = 1; i < answers.length; i++) assert.ok(answers[i]!.startsWith(answers[i - 1]!), `frame ${i} takes back what was shown: ${JSON.stringify(answers.slice(i - 1, i + 1))}`);
      const final = frames.find((f) => f !== '[DONE]' && f.data?.final)!.data;
      assert.doesNotMatch(final.answer, /911|Hamish|McTavish/);
      assert.match(final.answer, /^The documents say: "In a mountain emergency, call 999 and ask for the police, then mountain rescue" \[ID:0\]\./);
      assert.match(final.answer, /Stay with your group\.$/, 'a sentence with no figure or name passes');
      const { grounding } = final.reference;
      assert.equal(grounding.checked, true);
      assert.deepEqual(grounding.replaced.map((r: { unsupported: string[] }) => r.unsupported), [['911'], ['Hamish', 'McTavish']]);
      assert.match(grounding.replaced[0].sentence, /call 911 at once/);
    });

    it('with grounding_check false the answer is the model\'s; a bad value is a 400 naming the field', async () => {
      assert.equal((await api.put(`/chats/${chatId}`, { prompt_config: { grounding_check: false } })).status, 200);
      const res = await api.post('/chat/completions', { chat_id: chatId, stream: false, messages: [{ role: 'user', content: QUESTION }] });
      assert.match(res.body.data.answer, /call 911 at once/);
      assert.equal(res.body.data.reference.grounding, undefined);
      const bad = await api.put(`/chats/${chatId}`, { prompt_config: { grounding_check: 'yes' } });
      assert.equal(bad.status, 400);
      assert.match(bad.body.message, /grounding_check/);
    });

    it('the system prompt\'s own words never come back as the answer, check or no check', async () => {
      fake.behaviour = { ...fake.behaviour, answer: fixedAnswer('The above is the knowledge base.') };
      const res = await api.post('/chat/completions', { chat_id: chatId, stream: false, messages: [{ role: 'user', content: 'Tell me something.' }] });
      assert.equal(res.body.data.answer, 'The documents do not say.');
      assert.equal(res.body.data.reference.grounding.replaced[0].sentence, 'The above is the knowledge base.');
    });
  });

  describe('with the real built-in chat model (no provider configured)', () => {
    it('the mountain emergency number is answered as 999, and no other number is stated', async () => {
      const { api } = await newUser('grounding-builtin');
      const { id } = await parsedDataset(api, `grounding-builtin-${process.pid}`, SAFETY);
      const chatId = (await createChat(api, { name: 'mountain', dataset_ids: [id] })).id;
      for (let run = 1; run <= 3; run++) {
        const res = await api.post('/chat/completions', { chat_id: chatId, stream: false, messages: [{ role: 'user', content: QUESTION }] });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const answer: string = res.body.data.answer;
        assert.match(answer, /\b999\b/, `run ${run}: ${answer}`);
        const others = (answer.replace(/\[ID:\d+\]/g, '').match(/\d+/g) ?? []).filter((n) => n !== '999');
        assert.deepEqual(others, [], `run ${run}: ${answer}`);
      }
    });
  });
});
