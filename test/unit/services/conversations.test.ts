import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { DatasetService } from '../../../src/services/datasets.js';
import { ProviderService } from '../../../src/services/providers.js';
import { outboundGuard } from '../../../src/services/outbound-urls.js';
import { ChatService } from '../../../src/services/chats.js';
import { SessionService } from '../../../src/services/sessions.js';
import { ConversationService } from '../../../src/services/conversations.js';
import type { ModelClients } from '../../../src/services/model-clients.js';
import { tenantPrincipal } from '../../../src/services/access.js';
import type { ChatDelta, ChatMessage, ChatModel } from '../../../src/models/types.js';
import { ModelError } from '../../../src/models/types.js';
import type { Turn } from '../../../src/chat/events.js';
import type { RetrieveInput } from '../../../src/services/retrieval.js';
import { openTestMetaDb, testProfiles } from '../../support/meta-store.js';
import { refused, storedDocument } from './fakes.js';

const noCleanup = { startDeleteDatasets: async () => {}, cancelParse: async () => {}, cancelDatasetIndex: async () => {}, waitDatasetIndex: async () => {} };

/** A remote chat model's double: answers with the scripted pieces, or fails after them; records what it was sent. */
class ScriptedModel implements ChatModel {
  readonly id = 'scripted@fake@OpenAI-API-Compatible';
  sent: ChatMessage[][] = [];
  constructor(
    public pieces: string[],
    public failAfter?: string,
  ) {}
  async *stream(messages: ChatMessage[]): AsyncIterable<ChatDelta> {
    this.sent.push(messages);
    for (const text of this.pieces) yield { kind: 'answer', text };
    if (this.failAfter) throw new ModelError(this.failAfter, 'OpenAI-API-Compatible', 502);
  }
  async complete(): Promise<string> {
    return this.pieces.join('');
  }
}

async function drain(turn: Turn): Promise<string> {
  let answer = '';
  for await (const ev of turn.events()) if (ev.type === 'final') answer = ev.answer;
  return answer;
}

for (const profile of testProfiles()) describe(`ConversationService: chat turns and their sessions [${profile}]`, () => {
  let db: MetaDb;
  let model: ScriptedModel;
  let chats: ChatService;
  let sessions: SessionService;
  let conversations: ConversationService;
  let chatId: string;
  let store: MetaStore;
  /** What the chat's retrieval is asked, and what it finds. */
  let retrievals: RetrieveInput[];
  let found: { total: number; chunks: unknown[]; doc_aggs: unknown[] };
  const owner = tenantPrincipal('a'.repeat(32));
  const stranger = tenantPrincipal('b'.repeat(32));

  beforeEach(async () => {
    db = await openTestMetaDb(profile);
    store = new MetaStore(db);
    retrievals = [];
    found = { total: 0, chunks: [], doc_aggs: [] };
    const providers = new ProviderService(store, outboundGuard({ allowPrivate: true }));
    model = new ScriptedModel(['The pass ', 'closes in winter.']);
    const models = { chat: async () => model } as unknown as ModelClients;
    const retriever = {
      retrieve: async (_p: unknown, input: RetrieveInput) => {
        retrievals.push(input);
        return found;
      },
    } as unknown as ConstructorParameters<typeof ConversationService>[5];
    chats = new ChatService(store, new DatasetService(store, providers, noCleanup), providers);
    sessions = new SessionService(store, chats);
    conversations = new ConversationService(store, chats, sessions, providers, models, retriever, pino({ level: 'silent' }));
    const chat = (await chats.create(owner, { name: 'guide', prompt_config: { prologue: 'Ask me.', system: 'You are a mountain guide. Tone: {tone}', parameters: [{ key: 'tone', optional: true }] } })) as { id: string };
    chatId = chat.id;
  });
  afterEach(() => db.close());

  const stored = async (sessionId: string) => (await sessions.getView(owner, chatId, sessionId)).messages as { role: string; content: string }[];

  it('a turn without a session opens one (prologue first), stores the question at once and the answer when it is complete', async () => {
    const turn = await conversations.start(owner, { chat_id: chatId, question: 'When does the pass close?', user_id: 'hiker', variables: {} });
    assert.deepEqual((await stored(turn.ids.session_id)).map((m) => m.role), ['assistant', 'user'], 'the question is stored before the answer');
    assert.equal(await drain(turn), 'The pass closes in winter.');
    assert.deepEqual((await stored(turn.ids.session_id)).map((m) => [m.role, m.content]), [
      ['assistant', 'Ask me.'],
      ['user', 'When does the pass close?'],
      ['assistant', 'The pass closes in winter.'],
    ]);
  });

  it('a model that fails mid-answer leaves the question unanswered and saves no partial answer', async () => {
    model.failAfter = 'upstream went away';
    const turn = await conversations.start(owner, { chat_id: chatId, question: 'Is it open?', variables: {} });
    await assert.rejects(drain(turn), /upstream went away/);
    assert.deepEqual((await stored(turn.ids.session_id)).map((m) => m.role), ['assistant', 'user']);
  });

  it("the next turn of a session sends the earlier turns as history, and the chat's variables in its system prompt", async () => {
    const first = await conversations.start(owner, { chat_id: chatId, question: 'First question?', variables: { tone: 'brief' } });
    await drain(first);
    await drain(await conversations.start(owner, { chat_id: chatId, session_id: first.ids.session_id, question: 'Second question?', variables: { tone: 'brief' } }));
    const sent = model.sent.at(-1)!;
    assert.match(sent[0]!.content as string, /You are a mountain guide\. Tone: brief/);
    const rest = sent.slice(1).map((m) => [m.role, m.content]);
    assert.deepEqual(rest.slice(-3), [['user', 'First question?'], ['assistant', 'The pass closes in winter.'], ['user', 'Second question?']]);
  });

  it('refuses an empty question and another tenant’s chat or session, storing nothing', async () => {
    await assert.rejects(conversations.start(owner, { chat_id: chatId, question: '  ', variables: {} }), /The question must not be empty/);
    await assert.rejects(conversations.start(stranger, { chat_id: chatId, question: 'hi', variables: {} }), (err: { status?: number }) => err.status === 404);
    const turn = await conversations.start(owner, { chat_id: chatId, question: 'hi', variables: {} });
    await drain(turn);
    await assert.rejects(conversations.start(owner, { chat_id: chatId, session_id: 'f'.repeat(32), question: 'hi', variables: {} }), (err: { status?: number }) => err.status === 404);
    assert.equal(model.sent.length, 1, 'the model was asked once');
  });

  it('the OpenAI-compatible route needs a user message last, the question, and stores no session', async () => {
    const call = (messages: { role: 'system' | 'user' | 'assistant'; content: string }[]) => conversations.startOpenAI(owner, { chat_id: chatId, model: 'model', messages, variables: {}, reference: false });
    await assert.rejects(call([{ role: 'assistant', content: 'hello' }]), /`messages` must contain at least one message with role user/);
    await assert.rejects(call([{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }]), /The last message must be from user/);
    const turn = await call([{ role: 'system', content: 'Answer in French.' }, { role: 'user', content: 'Is it open?' }]);
    assert.equal(turn.ids.session_id, '');
    assert.equal(await drain(turn), 'The pass closes in winter.');
    assert.match(model.sent.at(-1)![0]!.content as string, /You are a mountain guide[\s\S]*Answer in French\./, "the caller's system message follows the chat's");
  });

  it('a mandatory prompt variable that is not given is a 400 naming it, and opens no session', async () => {
    const strict = (await chats.create(owner, { name: 'strict', prompt_config: { system: 'Answer {tone}ly.', parameters: [{ key: 'tone', optional: false }] } })) as { id: string };
    await refused(conversations.start(owner, { chat_id: strict.id, question: 'hi', variables: {} }), 400, /^Missing value for the mandatory prompt variable 'tone'/);
    assert.deepEqual(await sessions.list(owner, strict.id, { page: 1, page_size: 10, orderby: 'create_time', desc: false }), []);
    assert.equal(model.sent.length, 0);
  });

  it("a chat over datasets asks retrieval with the chat's settings; when nothing is found its empty_response is the answer, without the model", async () => {
    const ds = (await new DatasetService(store, new ProviderService(store, outboundGuard({ allowPrivate: true })), noCleanup).create(owner, { name: 'alps' })) as { id: string };
    await storedDocument(store, { id: ds.id, tenant_id: owner.tenantId });
    const chat = (await chats.create(owner, { name: 'kb', dataset_ids: [ds.id], top_n: 4, top_k: 50, similarity_threshold: 0.4, vector_similarity_weight: 0.6, prompt_config: { empty_response: 'Nothing on that.' } })) as { id: string };
    const turn = await conversations.start(owner, { chat_id: chat.id, question: 'Is the pass open?', variables: {} });
    assert.equal(await drain(turn), 'Nothing on that.');
    assert.deepEqual(retrievals.map((r) => ({ ...r })), [{ question: 'Is the pass open?', dataset_ids: [ds.id], page: 1, page_size: 4, similarity_threshold: 0.4, vector_similarity_weight: 0.6, top_k: 50, use_kg: false }]);
    assert.equal(model.sent.length, 0, 'the model was not asked');
    const messages = (await sessions.getView(owner, chat.id, turn.ids.session_id)).messages as { role: string; content: string }[];
    assert.deepEqual(messages.slice(-2).map((m) => [m.role, m.content]), [['user', 'Is the pass open?'], ['assistant', 'Nothing on that.']]);
  });

  it('a question is trimmed before it is stored and asked, a chat without datasets retrieves nothing; a session of another chat is a 404', async () => {
    const turn = await conversations.start(owner, { chat_id: chatId, question: '  Is it open?  ', variables: {} });
    await drain(turn);
    assert.equal((await stored(turn.ids.session_id))[1]!.content, 'Is it open?');
    assert.equal(model.sent[0]!.at(-1)!.content, 'Is it open?');
    assert.deepEqual(retrievals, [], 'a chat without datasets retrieves nothing');
    const other = (await chats.create(owner, { name: 'other' })) as { id: string };
    await refused(conversations.start(owner, { chat_id: other.id, session_id: turn.ids.session_id, question: 'hi', variables: {} }), 404, /not found in chat/);
  });
});
