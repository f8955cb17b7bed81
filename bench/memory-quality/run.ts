/**
 * Memory-quality benchmark: evidence recall of search_message on the set in set.json (generate.ts).
 *
 *   npx tsx bench/memory-quality/run.ts [--extractors perfect,builtin] [--conversations 4]
 *                                       [--weights 0,0.3,0.5,0.7,1] [--experiments true] [--top-n 10]
 *
 * Starts a real `cairn start` (its own data dir and Temporal dev server, embedded worker) and talks to it
 * over HTTP only. Per conversation one memory; every turn is added with POST /messages carrying its
 * session id and session time (valid_at), one session after another: a session's extraction workflows are
 * waited for before the next session is added, as sessions days apart would be (and so a slow model's queue
 * never holds more than one session, well within the extraction step's timeout). Embeddings are the
 * built-in model (bge-small) throughout. Only the first `conversations` conversations of the set are used
 * (each holds 8 questions of every kind, so a prefix is the same sample for every kind). Extractors:
 *   - perfect: a scripted fake chat model (test/fakes) that answers each extraction request with the set's
 *     gold facts for that turn, as semantic items, and the facts-stay-current question with the set's gold
 *     updates (`replaces`): retrieval measured apart from extraction;
 *   - builtin: the built-in chat model (SmolLM2-135M, on the CPU, a few seconds per turn). Its table is
 *     printed after each conversation (cumulative), beside the perfect extractor's on the same conversations
 *     when both run.
 * Each question is searched once per mode with top_n results (default 10), similarity_threshold 0:
 *   - raw:   message_type=raw, the turns themselves;
 *   - items: message_type=semantic,episodic,procedural, each item mapped to its source turn (source_id);
 *   - both:  every message, items mapped to their turns.
 * Results are ordered by similarity, mapped to turns (first occurrence kept), and recall@k is the share of
 * a question's evidence turns among the first k turns, averaged per kind. Also, unless `--experiments false`
 * (perfect extractor only): raw search at other keywords_similarity_weight values, and an experiment with
 * query expansion (expand.ts).
 */
import { argument } from '../common.js';
import { apiCall as call } from '../common.js';
import { startBenchCairn, sleep, type BenchCairn } from '../cairn-server.js';
import { lastUserMessage, startFakeOpenAI, type FakeMessage } from '../../test/fakes/index.js';
import { BUILTIN_CHAT_MODEL_ID, BUILTIN_EMBEDDING_MODEL_ID } from '../../src/models/builtin/spec.js';
import { MAX_MEMORY_SIZE } from '../../src/memories/types.js';
import { FACT_UPDATE_PROMPT_START } from '../../src/memories/fact-updates.js';
import type { MemoryQualitySet, QuestionKind, SetConversation, SetQuestion } from './generate.js';
import { expandedSearch } from './expand.js';
import fs from 'node:fs';

const KINDS: QuestionKind[] = ['single-hop', 'temporal', 'multi-hop', 'update'];
const PERFECT_CHAT = 'perfect-extractor@perfect@OpenAI-API-Compatible';

export interface Hit {
  message_id: number;
  message_type: string;
  source_id: number;
  similarity: number;
  content: string;
}

interface Loaded {
  conversation: SetConversation;
  memoryId: string;
  /** raw message id → turn id */
  turnOf: Map<number, string>;
}

const set = JSON.parse(fs.readFileSync(new URL('./set.json', import.meta.url), 'utf8')) as MemoryQualitySet;
const factsByUserText = new Map(set.conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns.map((t) => [t.user, t.facts] as const))));
/**
 * Gold knowledge updates as "new fact → earlier fact" pairs. Pairs, not a map from the new fact: the same new
 * fact ("The user now lives in a suburban house…") replaces a different earlier one in each conversation.
 */
const goldUpdate = (newFact: string, earlier: string) => `${newFact}\u0000${earlier}`;
const goldUpdates = new Set(set.conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns.flatMap((t) => t.facts.flatMap((f) => (t.replaces ?? []).map((r) => goldUpdate(f, r)))))));

/**
 * The perfect reconciler's answer to the facts-stay-current question (src/memories/fact-updates.ts): an
 * existing fact is "updates" exactly when the set says the new fact replaces it, else "adds".
 */
function perfectFactDecisions(question: string): string {
  const newFact = /^New fact \([^)]*\): (.*)$/m.exec(question)?.[1] ?? '';
  const decisions = [...question.matchAll(/^(\d+)\. (.*) \(since [^)]*\)$/gm)]
    .map(([, id, content]) => ({ id: Number(id), relation: goldUpdates.has(goldUpdate(newFact, content!)) ? 'updates' : 'adds' }));
  return JSON.stringify({ decisions });
}

/**
 * The perfect extractor: the gold facts of the turn in the extraction request, as semantic items; and the
 * gold updates when asked whether a new fact replaces earlier ones.
 */
async function startPerfectExtractor() {
  const system = (messages: FakeMessage[]) => messages.find((m) => m.role === 'system')?.content ?? '';
  const isExtraction = (messages: FakeMessage[]) => system(messages).includes('## OUTPUT FORMAT');
  return startFakeOpenAI({
    answer: (messages) => {
      if (system(messages).startsWith(FACT_UPDATE_PROMPT_START)) return { answer: perfectFactDecisions(lastUserMessage(messages)) };
      if (!isExtraction(messages)) return { answer: 'ok' };
      const said = /User Input: ([^\n]*)/.exec(lastUserMessage(messages))?.[1] ?? '';
      const facts = factsByUserText.get(said) ?? [];
      return { answer: JSON.stringify({ semantic: facts.map((content) => ({ content, valid_at: null, invalid_at: null })), episodic: [], procedural: [] }) };
    },
  });
}

const elapsed = (since: number) => ((Date.now() - since) / 1000).toFixed(0);

/** Waits until the extraction of all `turns` raw messages of the memory has ended (done or failed). */
async function extractionsEnded(cairn: BenchCairn, memoryId: string, turns: number): Promise<{ failed: number; items: number; replaced: number; current: Map<number, number> }> {
  for (;;) {
    const list = (await call(`${cairn.api}/memories/${memoryId}?page_size=100`, 'GET', undefined, cairn.key)).json.data.messages.message_list as any[];
    const raws = list.filter((m) => m.message_type === 'raw');
    const ended = raws.filter((m) => m.task.progress === 1 || m.task.progress === -1);
    if (ended.length === turns) {
      const replaced = raws.reduce((n, m) => n + Number(/(\d+) earlier fact\(s\) replaced/.exec(m.task.progress_msg ?? '')?.[1] ?? 0), 0);
      const current = new Map<number, number>(raws.map((m) => [m.message_id as number, (m.extract as unknown[]).length]));
      return { failed: ended.filter((m) => m.task.progress === -1).length, items: raws.reduce((n, m) => n + m.extract.length, 0), replaced, current };
    }
    await sleep(1000);
  }
}

/**
 * The gold replaced facts of a conversation that are still current: what the reconciler missed. The perfect
 * extractor gives each turn exactly its gold facts, so a turn holding a replaced fact should have no current item.
 */
function unretired(conversation: SetConversation, turnOf: Map<number, string>, currentItems: Map<number, number>): { gold: number; missed: string[] } {
  const turns = new Map(conversation.sessions.flatMap((s) => s.turns.map((t) => [t.turn_id, t] as const)));
  const gold = new Set(conversation.sessions.flatMap((s) => s.turns.flatMap((t) => t.replaces ?? [])));
  const missed = [...turnOf].flatMap(([messageId, turnId]) => ((currentItems.get(messageId) ?? 0) > 0 ? turns.get(turnId)!.facts.filter((f) => gold.has(f)) : []));
  return { gold: gold.size, missed };
}

async function loadConversation(cairn: BenchCairn, conversation: SetConversation, llmId: string, label: string): Promise<Loaded> {
  const { api, key } = cairn;
  const created = await call(`${api}/memories`, 'POST', { name: `${label}-${conversation.conversation_id}`, memory_type: ['raw', 'semantic', 'episodic'], embd_id: BUILTIN_EMBEDDING_MODEL_ID, llm_id: llmId }, key);
  const memoryId = created.json.data.id as string;
  await call(`${api}/memories/${memoryId}`, 'PUT', { memory_size: MAX_MEMORY_SIZE }, key);
  const turnOf = new Map<number, string>();
  const started = Date.now();
  let failed = 0;
  let items = 0;
  let replaced = 0;
  let current = new Map<number, number>();
  for (const [s, session] of conversation.sessions.entries()) {
    for (const turn of session.turns) {
      const added = await call(`${api}/messages`, 'POST', {
        memory_id: [memoryId], agent_id: 'assistant', session_id: session.session_id, user_input: turn.user, agent_response: turn.agent, valid_at: turn.valid_at,
      }, key);
      turnOf.set(added.json.data[0].message_id as number, turn.turn_id);
    }
    ({ failed, items, replaced, current } = await extractionsEnded(cairn, memoryId, turnOf.size));
    console.log(`    ${label} ${conversation.conversation_id}: session ${s + 1}/${conversation.sessions.length} extracted, ${turnOf.size} turns in ${elapsed(started)} s`);
  }
  console.log(`  ${label} ${conversation.conversation_id}: ${turnOf.size} turns extracted in ${elapsed(started)} s, ${items} current items, ${replaced} facts replaced, ${failed} failed`);
  if (label === 'perfect') {
    const { gold, missed } = unretired(conversation, turnOf, current);
    console.log(`    of the set's ${gold} replaced facts ${gold - missed.length} were retired${missed.length ? `; still current: ${missed.map((f) => `"${f}"`).join(', ')}` : ''}`);
  }
  return { conversation, memoryId, turnOf };
}

export async function search(cairn: BenchCairn, memoryId: string, query: string, params: Record<string, string | number>): Promise<Hit[]> {
  const qs = new URLSearchParams({ query, memory_id: memoryId, similarity_threshold: '0', ...Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])) });
  const hits = (await call(`${cairn.api}/messages/search?${qs}`, 'GET', undefined, cairn.key)).json.data as Hit[];
  return hits.sort((a, b) => b.similarity - a.similarity);
}

/** The turns behind hits, best first, each once. */
function turnsOf(hits: Hit[], turnOf: Map<number, string>): string[] {
  const out: string[] = [];
  for (const h of hits) {
    const turn = turnOf.get(h.message_type === 'raw' ? h.message_id : h.source_id);
    if (turn && !out.includes(turn)) out.push(turn);
  }
  return out;
}

type Recall = Map<QuestionKind | 'all', { at5: number; at10: number; n: number }>;

function recallRow(results: { q: SetQuestion; turns: string[] }[]): Recall {
  const table: Recall = new Map();
  for (const { q, turns } of results) {
    const share = (k: number) => q.evidence.filter((e) => turns.slice(0, k).includes(e)).length / q.evidence.length;
    for (const key of [q.kind, 'all'] as const) {
      const row = table.get(key) ?? { at5: 0, at10: 0, n: 0 };
      row.at5 += share(5);
      row.at10 += share(10);
      row.n += 1;
      table.set(key, row);
    }
  }
  return table;
}

function printTable(title: string, rows: [string, Recall][]) {
  console.log(`\n${title}`);
  const cols = [...KINDS, 'all'] as const;
  console.log(`| mode | ${cols.map((c) => `${c} @5 | ${c} @10`).join(' | ')} |`);
  console.log(`|---|${cols.map(() => '---:|---:').join('|')}|`);
  for (const [label, recall] of rows) {
    const cell = (c: (typeof cols)[number]) => {
      const r = recall.get(c);
      return r ? `${(r.at5 / r.n).toFixed(2)} | ${(r.at10 / r.n).toFixed(2)}` : '– | –';
    };
    console.log(`| ${label} | ${cols.map(cell).join(' | ')} |`);
  }
  const n = rows[0]?.[1];
  if (n) console.log(`(questions: ${[...cols].map((c) => `${c} ${n.get(c)?.n ?? 0}`).join(', ')})`);
}

const ITEM_TYPES = 'semantic,episodic,procedural';
const MODES: [string, Record<string, string>][] = [['raw', { message_type: 'raw' }], ['items', { message_type: ITEM_TYPES }], ['both', {}]];

async function evaluate(cairn: BenchCairn, loaded: Loaded[], params: Record<string, string | number>, mode: Record<string, string>) {
  const results: { q: SetQuestion; turns: string[] }[] = [];
  for (const l of loaded) {
    for (const q of set.questions.filter((x) => x.conversation_id === l.conversation.conversation_id)) {
      results.push({ q, turns: turnsOf(await search(cairn, l.memoryId, q.question, { ...params, ...mode }), l.turnOf) });
    }
  }
  return recallRow(results);
}

/** keywords_similarity_weight sweep and query expansion, on the perfect extractor's memories. */
async function runExperiments(cairn: BenchCairn, loaded: Loaded[], weights: number[], topN: number) {
  const sweep: [string, Recall][] = [];
  for (const kw of weights) {
    for (const [label, mode] of MODES.filter(([l]) => l !== 'items')) sweep.push([`${label}, kw ${kw}`, await evaluate(cairn, loaded, { top_n: topN, keywords_similarity_weight: kw }, mode)]);
  }
  printTable('keywords_similarity_weight sweep (perfect extractor memories)', sweep);
  const expansion: [string, Recall][] = [];
  for (const kw of [0.7, 0.5]) {
    for (const [label, mode] of MODES.filter(([l]) => l !== 'items')) {
      const results: { q: SetQuestion; turns: string[] }[] = [];
      for (const l of loaded) {
        for (const q of set.questions.filter((x) => x.conversation_id === l.conversation.conversation_id)) {
          const hits = await expandedSearch((query, extra) => search(cairn, l.memoryId, query, { top_n: topN, keywords_similarity_weight: kw, ...mode, ...extra }), q.question, topN);
          results.push({ q, turns: turnsOf(hits, l.turnOf) });
        }
      }
      expansion.push([`${label}, kw ${kw}, expanded`, recallRow(results)]);
    }
  }
  printTable('Query expansion experiment (expand.ts): second query from the first result', expansion);
}

async function main() {
  const extractors = argument('extractors', 'perfect,builtin').split(',');
  const conversations = set.conversations.slice(0, Number(argument('conversations', String(set.conversations.length))));
  const experiments = argument('experiments', 'true') !== 'false';
  const weights = argument('weights', '0,0.3,0.5,0.7,1').split(',').map(Number);
  const topN = Number(argument('top-n', '10'));
  const fake = await startPerfectExtractor();
  const cairn = await startBenchCairn('memquality', { CAIRN_EMBEDDED_WORKER: 'true' });
  try {
    await call(`${cairn.api}/providers/OpenAI-API-Compatible/instances`, 'POST', {
      instance_name: 'perfect', base_url: fake.baseUrl, api_key: 'sk-fake', model_info: [{ model_name: 'perfect-extractor', model_type: 'chat', max_tokens: 8192 }],
    }, cairn.key);
    const questions = set.questions.filter((q) => conversations.some((c) => c.conversation_id === q.conversation_id)).length;
    console.log(`set: ${conversations.length} of ${set.conversations.length} conversations, ${questions} questions (seed ${set.seed}); top_n ${topN}`);
    const perfect: Loaded[] = [];
    const perfectRows = async (loaded: Loaded[]) => {
      const rows: [string, Recall][] = [];
      for (const [label, mode] of MODES) rows.push([`perfect, ${label}`, await evaluate(cairn, loaded, { top_n: topN }, mode)]);
      return rows;
    };
    if (extractors.includes('perfect')) {
      for (const c of conversations) perfect.push(await loadConversation(cairn, c, PERFECT_CHAT, 'perfect'));
      printTable('Perfect extractor (scripted gold facts), bge-small embeddings, default weight 0.7: evidence recall', await perfectRows(perfect));
      if (experiments) await runExperiments(cairn, perfect, weights, topN);
    }
    if (extractors.includes('builtin')) {
      const loaded: Loaded[] = [];
      for (const c of conversations) {
        loaded.push(await loadConversation(cairn, c, BUILTIN_CHAT_MODEL_ID, 'builtin'));
        const rows: [string, Recall][] = [];
        for (const [label, mode] of MODES) rows.push([`builtin, ${label}`, await evaluate(cairn, loaded, { top_n: topN }, mode)]);
        const ids = loaded.map((l) => l.conversation.conversation_id).join(', ');
        const beside = perfect.length ? await perfectRows(perfect.slice(0, loaded.length)) : [];
        printTable(`Built-in chat model (SmolLM2-135M) extraction, bge-small, weight 0.7, conversations ${ids}${beside.length ? ' (the perfect extractor beside it, same conversations)' : ''}`, [...rows, ...beside]);
      }
    }
  } finally {
    await cairn.stop();
    await fake.close();
  }
}

await main();
