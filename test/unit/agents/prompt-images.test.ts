import assert from 'node:assert/strict';
import { runCanvas, type Executor } from '../../../src/agents/interpreter.js';
import type { CanvasDsl } from '../../../src/agents/dsl.js';
import type { AgentRunInput, ComponentCall, PromptMessage } from '../../../src/agents/run-types.js';

const PNG = 'data:image/png;base64,iVBORw0KGgo=';
const JPEG = 'data:image/jpeg;base64,/9j/4AAQ';

/** Begin → LLM (with `params`) → Message, run on a turn whose attached files are `files`; the LLM's prompt. */
async function promptOf(params: Record<string, unknown>, files: string[], inputs: AgentRunInput['request']['inputs'] = {}): Promise<PromptMessage[]> {
  const canvas: CanvasDsl = {
    components: {
      begin: { obj: { component_name: 'Begin', params: { inputs: { photo: { type: 'line', name: 'photo', optional: true } } } }, downstream: ['LLM:a'], upstream: [] },
      'LLM:a': { obj: { component_name: 'LLM', params }, downstream: ['Message:m'], upstream: [] },
      'Message:m': { obj: { component_name: 'Message', params: { content: ['done'] } }, downstream: [], upstream: [] },
    },
    globals: {},
    history: [],
    path: [],
    retrieval: [],
  };
  const calls: ComponentCall[] = [];
  const exec: Executor = {
    call: async (call) => {
      calls.push(call);
      return { outputs: { content: 'ok' } };
    },
    emit: () => {},
    now: () => 1_700_000_000_000,
    random: () => 0,
  };
  const input: AgentRunInput = { runKey: 'r', agentId: 'a', sessionId: 's', tenantId: 't', createdAt: 1, canvas, names: {}, request: { query: 'Translate it', inputs, files, userId: 'u' } };
  await runCanvas(input, exec);
  const llm = calls.find((c) => c.kind === 'LLM') as unknown as { messages: PromptMessage[] };
  return llm.messages;
}

describe('images in an LLM prompt (RAGFlow visual_files_var and sys.files)', () => {
  it('the images of the variable visual_files_var names go beside the last user message', async () => {
    const messages = await promptOf({ sys_prompt: 'You translate.', prompts: [{ role: 'user', content: '{sys.query}' }], visual_files_var: 'sys.files' }, [PNG]);
    assert.deepEqual(messages.at(-1), { role: 'user', content: 'Translate it', images: [PNG] });
  });

  it("a turn's attached files join the prompt when it does not place {sys.files}: texts appended, images beside, each once", async () => {
    const messages = await promptOf({ prompts: [{ role: 'user', content: 'Q: {sys.query}' }], visual_files_var: 'sys.files' }, ['Hello from notes.txt', PNG, JPEG]);
    assert.deepEqual(messages.at(-1), { role: 'user', content: 'Q: Translate it\n\nHello from notes.txt', images: [PNG, JPEG] });
  });

  it('a prompt that places {sys.files} gets their texts there and their images beside, never base64 in the text', async () => {
    const messages = await promptOf({ prompts: [{ role: 'user', content: 'Files: {sys.files}' }] }, ['Hello', PNG]);
    const last = messages.at(-1)!;
    assert.equal(last.content, 'Files: ["Hello"]');
    assert.deepEqual(last.images, [PNG]);
  });

  it('an image inside a referenced input is taken out of the text and shown as an image', async () => {
    const messages = await promptOf({ prompts: [{ role: 'user', content: 'Photo: {begin@photo}.' }] }, [], { photo: { value: PNG } });
    assert.deepEqual(messages.at(-1), { role: 'user', content: 'Photo: .', images: [PNG] });
  });

  it('a prompt without images or files has no images field', async () => {
    const messages = await promptOf({ prompts: [{ role: 'user', content: '{sys.query}' }] }, []);
    assert.deepEqual(messages.at(-1), { role: 'user', content: 'Translate it' });
  });
});
