import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { harness } from './harness.js';
import { eventually, newUser, type Api } from './client.js';
import { BUILTIN_CHAT_MODEL_ID, BUILTIN_EMBEDDING_MODEL_ID } from '../../src/models/builtin/spec.js';
import { workflowIds } from '../../src/engine/task-queues.js';

/** Twenty turns a hiking assistant might keep: facts, plans and ways of doing things. */
const TURNS: [string, string][] = [
  ['My name is Ailsa and I live in Inverness.', 'Nice to meet you, Ailsa.'],
  ['I am walking the Cairngorms in May.', 'Pack for snow on the high tops.'],
  ['My sister Morag is coming with me.', 'Two is safer than one.'],
  ['I am allergic to peanuts.', 'I will leave peanuts out of the meal plans.'],
  ['We booked the Corrour bothy for 14 May.', 'Bothies fill up; well done for booking.'],
  ['I always check the mountain forecast before I leave.', 'That is the right habit.'],
  ['My boots are size 39.', 'Noted: size 39.'],
  ['I prefer trails without scrambling.', 'I will suggest walks without scrambles.'],
  ['Last year I climbed Ben Nevis in July.', 'A fine summit in summer.'],
  ['To pack, I lay everything on the floor and tick it off a list.', 'A good way to forget nothing.'],
  ['Morag is a nurse in Aberdeen.', 'Useful on the hill.'],
  ['I drive a green Land Rover.', 'Good on the estate tracks.'],
  ['We plan to start from Linn of Dee at 7 am.', 'An early start gives you the daylight.'],
  ['I carry a first aid kit and a spare head torch.', 'Both are essential.'],
  ['My dog Bran stays with my neighbour while I walk.', 'Bran will be in good hands.'],
  ['I hate midges.', 'May is before the worst of them.'],
  ['We will walk 18 kilometres on the first day.', 'A solid day out.'],
  ['When it rains I wax my boots the evening before.', 'That keeps them dry.'],
  ['I learned navigation with the Mountaineering Scotland course in 2023.', 'Good training.'],
  ['My favourite hill food is oatcakes with cheese.', 'Oatcakes travel well.'],
];

/*
 * Memory extraction as a new user gets it: no provider configured, so the memory's chat model is the
 * built-in one (SmolLM2-135M-Instruct, real, on the CPU), held to the extraction's JSON Schema.
 */
describe('memory extraction with the built-in chat model', function () {
  this.timeout(900_000);
  let api: Api;

  before(async () => {
    ({ api } = await newUser('builtin-memory'));
  });

  it('twenty turns: every extraction ends done, with items or the reason it kept none; none fails on syntax', async () => {
    const created = await api.post('/memories', { name: `hikes-${process.pid}`, memory_type: ['raw', 'semantic', 'episodic'], embd_id: BUILTIN_EMBEDDING_MODEL_ID, llm_id: BUILTIN_CHAT_MODEL_ID });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const memoryId = created.body.data.id as string;
    const ids: number[] = [];
    for (const [user, agent] of TURNS) {
      const res = await api.post('/messages', { memory_id: [memoryId], agent_id: 'guide', session_id: 'may-trip', user_input: user, agent_response: agent });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      ids.push(res.body.data[0].message_id);
    }
    const started = Date.now();
    const listed = await eventually(
      async () => {
        // With the items later facts replaced (include_invalid): a turn's items are what it extracted.
        const list = (await api.get(`/memories/${memoryId}`, { page_size: 100, include_invalid: true })).body.data.messages.message_list as any[];
        const raws = list.filter((m) => ids.includes(m.message_id));
        return raws.length === ids.length && raws.every((m) => m.task.progress === 1 || m.task.progress === -1) ? raws : undefined;
      },
      600_000,
      1000,
    );
    const seconds = (Date.now() - started) / 1000;
    console.log(`      20 turns extracted in ${seconds.toFixed(0)} s; e.g. ${JSON.stringify(listed.slice(0, 3).map((m) => m.task.progress_msg))}`);
    const failed = listed.filter((m) => m.task.progress !== 1).map((m) => m.task.progress_msg);
    assert.deepEqual(failed, [], 'no extraction failed');
    const items = listed.flatMap((m) => m.extract as { content: string; message_type: string }[]);
    for (const m of listed) {
      if (m.extract.length) assert.match(m.task.progress_msg, /^Done: \d+ item\(s\) stored/);
      else assert.match(m.task.progress_msg, /^Done: nothing to remember in this turn \(.+\)$/, 'a turn with no item says why');
    }
    const contents = await Promise.all(items.map(async (i: any) => (await api.get(`/messages/${memoryId}:${i.message_id}/content`)).body.data.content as string));
    for (const c of contents) assert.match(c, /\p{L}{2,}/u, `an item is text: ${JSON.stringify(c)}`);
    assert.ok(items.length >= 5, `the built-in model extracted ${items.length} item(s) from 20 turns`);
    // It does not judge fact updates (docs/memories.md "Facts stay current"): nothing retired, and turns with facts say so.
    assert.deepEqual(items.filter((i: any) => i.invalid_at !== null), [], 'no fact retired by the built-in model');
    const withFacts = listed.filter((m) => (m.extract as any[]).some((i) => i.message_type === 'semantic'));
    for (const m of withFacts) assert.match(m.task.progress_msg, /; earlier facts not checked for updates: the built-in chat model is too small/);
    console.log(`      ${items.length} items, ${listed.filter((m) => !m.extract.length).length} turns with none; e.g. ${JSON.stringify(contents.slice(0, 4))}`);

    const connection = await Connection.connect({ address: (await harness()).temporal.address });
    try {
      const described = await new Client({ connection }).workflow.getHandle(workflowIds.memoryExtractionBatches(memoryId)).describe();
      assert.notEqual(described.status.name, 'FAILED');
    } finally {
      await connection.close();
    }
  });
});
