import assert from 'node:assert/strict';
import { newUser, type Api } from './client.js';
import { parsedDataset } from './chat-helpers.js';
import { runStream, streamedText } from './agent-helpers.js';
import { endsInLoop } from '../../src/models/builtin/repetition.js';

/*
 * The "Dataset chatbot with citations" template as a new user runs it: no provider configured, so its
 * Agent runs on the built-in model (SmolLM2-135M-Instruct, real, on the CPU), over a dataset with a
 * document. Sampling as the template sets it (temperature 0.2, no seed), so every run differs.
 */
describe('agents on the built-in model use their tools: the dataset chatbot template', function () {
  this.timeout(300_000);
  let api: Api;
  let agentId: string;

  before(async function () {
    this.timeout(180_000);
    ({ api } = await newUser('builtin-agent-tools'));
    const { id: datasetId } = await parsedDataset(api, 'mountain-safety', {
      'safety.md': [
        '# Mountain safety',
        'In a mountain emergency, call 999 and ask for the police, then mountain rescue.',
        'Give your location and the number of people in your group.',
        'Carry a map, a compass, a head torch and spare warm clothes on every walk.',
      ].join('\n\n'),
    });
    const created = await api.post('/agents', { template_id: 'dataset_chatbot', title: `chatbot-builtin-${process.pid}`, dataset_ids: [datasetId] });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    agentId = created.body.data.id;
  });

  it('on every run the Agent searches the dataset (a tool event says so), its reference holds the chunks, and the answer does not loop', async () => {
    for (let run = 1; run <= 3; run++) {
      const started = Date.now();
      const { events } = await runStream(api, { agent_id: agentId, query: 'What number should I call in a mountain emergency?' });
      const seconds = (Date.now() - started) / 1000;
      const names = events.map((e) => e.event);
      assert.ok(names.includes('workflow_finished'), `run ${run}: ${JSON.stringify(events.at(-1))}`);

      const toolStarted = events.find((e) => e.event === 'tool_started');
      const toolFinished = events.find((e) => e.event === 'tool_finished');
      assert.ok(toolStarted && toolFinished, `run ${run}: tool events in ${names.join(', ')}`);
      assert.equal(toolStarted.data.component_id, 'Agent:DatasetAnswerer');
      assert.equal(toolStarted.data.tool_name, 'search_my_dateset');
      assert.deepEqual(toolStarted.data.arguments, { query: 'What number should I call in a mountain emergency?' });
      assert.equal(toolFinished.data.error, null);
      assert.ok(toolFinished.data.retrieved.total > 0, JSON.stringify(toolFinished.data));
      assert.equal(toolFinished.data.retrieved.chunks[0].document_name, 'safety.md');
      assert.match(toolFinished.data.result, /^\d+ chunks?: safety\.md$/);
      const firstMessage = names.indexOf('message');
      assert.ok(names.indexOf('tool_finished') < firstMessage, `run ${run}: the search comes before the answer: ${names.join(', ')}`);

      const reference = events.find((e) => e.event === 'message_end').data.reference;
      assert.ok(reference.total > 0 && reference.chunks.length > 0, `run ${run}: reference ${JSON.stringify(reference)}`);
      assert.ok(reference.chunks.some((c: any) => /call 999/.test(c.content)));

      const answer = streamedText(events);
      assert.ok(answer.trim().length > 0, `run ${run}: an answer`);
      assert.ok(!endsInLoop(answer) && !/(.{20,}?)\1\1/s.test(answer), `run ${run}: the answer repeats itself: ${answer}`);
      console.log(`      run ${run}: ${seconds.toFixed(1)} s, ${reference.total} chunks, answer: ${JSON.stringify(answer.slice(0, 160))}`);
    }
  });
});
