/**
 * The kill -9 soak's checker: compares what the soak's clients were told (the acknowledged requests in a
 * `Ledger`) with what Cairn lists through its API, the way a user would see it.
 *
 * Each check is a fresh look at the installation and returns its findings; nothing accumulates across
 * rounds (the first version appended every round's findings to one list, so one wrong reading was counted
 * again after every kill). Lost = acknowledged but not listed; doubled = listed more than once, whether its
 * request was acknowledged or cut by a kill.
 */

export type Kind = 'chat' | 'agent' | 'memory' | 'document';
export const KINDS: Kind[] = ['chat', 'agent', 'memory', 'document'];

export interface Finding {
  kind: Kind | 'process' | 'health';
  problem: 'lost' | 'doubled' | 'chunks' | 'not done' | 'orphan' | 'unhealthy' | 'restart';
  detail: string;
}

/** What the clients sent and what Cairn acknowledged (a 200 with code 0), per kind. */
export class Ledger {
  readonly sent: Record<Kind, number> = { chat: 0, agent: 0, memory: 0, document: 0 };
  readonly acknowledged: Record<Kind, number> = { chat: 0, agent: 0, memory: 0, document: 0 };
  /** Acknowledged questions per chat / agent session id, in the order asked. */
  readonly chat = new Map<string, string[]>();
  readonly agent = new Map<string, string[]>();
  /** Acknowledged memory messages (their user_input) per memory session id. */
  readonly memory = new Map<string, string[]>();
  /** Acknowledged uploads: document id to file name. */
  readonly documents = new Map<string, string>();

  /** Requests cut by a kill: sent, and the connection closed before an answer. */
  readonly cut: Record<Kind, number> = { chat: 0, agent: 0, memory: 0, document: 0 };
  /** Requests that never reached Cairn (connection refused: it was down, restarting). Not counted as sent. */
  readonly down: Record<Kind, number> = { chat: 0, agent: 0, memory: 0, document: 0 };
  /** Requests Cairn answered with an error, per kind and message: none is expected, each is reported. */
  readonly refused = new Map<string, number>();

  /** Counts one request of `kind`; `acknowledge` records it once Cairn answered it with success. */
  async request<T>(kind: Kind, send: () => Promise<T>, acknowledge: (result: T) => void): Promise<T> {
    this.sent[kind]++;
    let result: T;
    try {
      result = await send();
    } catch (err) {
      if (connectionRefused(err)) {
        this.sent[kind]--;
        this.down[kind]++;
      } else if (unanswered(err)) this.cut[kind]++;
      else {
        const reason = `${kind}: ${String(err).replace(/[0-9a-f]{32}/g, '<id>').slice(0, 200)}`;
        this.refused.set(reason, (this.refused.get(reason) ?? 0) + 1);
      }
      throw err;
    }
    this.acknowledged[kind]++;
    acknowledge(result);
    return result;
  }

  /** A copy of the acknowledged items, taken before a check lists what Cairn stored (items acknowledged meanwhile are for the next check). */
  snapshot(): Pick<Ledger, 'chat' | 'agent' | 'memory' | 'documents'> {
    const copy = (m: Map<string, string[]>) => new Map([...m].map(([k, v]) => [k, [...v]]));
    return { chat: copy(this.chat), agent: copy(this.agent), memory: copy(this.memory), documents: new Map(this.documents) };
  }
}

function connectionRefused(err: unknown): boolean {
  return err instanceof TypeError && (err.cause as { code?: string } | undefined)?.code === 'ECONNREFUSED';
}

/** No HTTP answer at all: undici's "fetch failed" (refused, reset, closed mid-body) or a body cut short. */
function unanswered(err: unknown): boolean {
  return err instanceof TypeError || (err instanceof Error && /terminated|socket|ECONNRE|other side closed/i.test(`${err.message} ${String((err as { cause?: unknown }).cause ?? '')}`));
}

export type Call = (method: string, route: string, body?: unknown) => Promise<any>;

const PAGE = 100;

/**
 * Every row of a paged list. `oldestFirst` for lists that grow while they are read: rows created meanwhile
 * land after the last page, so none is skipped (newest first, they would push rows onto a page already read).
 */
export async function listAll<T>(call: Call, route: string, rows: (data: any) => T[] = (d) => d, oldestFirst = true): Promise<T[]> {
  const all: T[] = [];
  const query = `${route.includes('?') ? '&' : '?'}${oldestFirst ? 'orderby=create_time&desc=false&' : ''}`;
  for (let page = 1; ; page++) {
    const got = rows(await call('GET', `${route}${query}page=${page}&page_size=${PAGE}`));
    all.push(...got);
    if (got.length < PAGE) return all;
  }
}

function tally(values: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return counts;
}

/** Lost (acknowledged, listed 0 times) and doubled (listed more than once) among one scope's items. */
export function compare(kind: Kind, scope: string, acknowledged: string[], listed: string[]): Finding[] {
  const counts = tally(listed);
  const findings: Finding[] = [];
  for (const item of acknowledged) if (!counts.has(item)) findings.push({ kind, problem: 'lost', detail: `${scope}: "${item}" acknowledged, not listed` });
  for (const [item, n] of counts) if (n > 1) findings.push({ kind, problem: 'doubled', detail: `${scope}: "${item}" listed ${n} times` });
  return findings;
}

/**
 * Chat or agent sessions: each session's user messages, read from the session's `message` list (the
 * spec's field; agent sessions have no `messages` alias, which is why the first checker found every
 * acknowledged agent question "stored 0 times").
 */
export async function checkSessions(call: Call, kind: 'chat' | 'agent', owner: string, ledger: Ledger): Promise<Finding[]> {
  const route = kind === 'chat' ? `/chats/${owner}/sessions` : `/agents/${owner}/sessions?dsl=false`;
  const expected = ledger.snapshot()[kind];
  const sessions = await listAll<{ id: string; message?: { role: string; content: string }[] }>(call, route);
  const byId = new Map(sessions.map((s) => [s.id, (s.message ?? []).filter((m) => m.role === 'user').map((m) => m.content)]));
  const findings: Finding[] = [];
  for (const [id, asked] of byId) findings.push(...compare(kind, `${kind} session ${id}`, expected.get(id) ?? [], asked));
  for (const [id, questions] of expected) if (!byId.has(id)) findings.push({ kind, problem: 'lost', detail: `${kind} session ${id} with ${questions.length} acknowledged questions is not listed` });
  return findings;
}

/** Memory messages per session (GET /messages lists at most 100, most recent first: the soak keeps sessions at 50). */
export async function checkMemory(call: Call, memoryId: string, ledger: Ledger, sessions: string[]): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const session of sessions) {
    const expected = ledger.snapshot().memory.get(session) ?? [];
    const listed = (await call('GET', `/messages?memory_id=${memoryId}&session_id=${session}&limit=100`)) as { content: string }[];
    const inputs = listed.map((m) => /^User Input: (.*)$/m.exec(m.content)?.[1] ?? m.content);
    findings.push(...compare('memory', `memory session ${session}`, expected, inputs));
  }
  return findings;
}

export interface DocumentView { id: string; name: string; run: string; chunk_count: number; progress_msg?: string }

export const listDocuments = (call: Call, dataset: string) => listAll<DocumentView>(call, `/datasets/${dataset}/documents`, (d) => d.docs);

/**
 * Documents: every acknowledged upload listed once (Cairn renames a second file of the same name to
 * `name(1).ext`, so that form counts as the same file), each DONE document's chunks listed once and as
 * many as its chunk_count, and at the end (`final`) every document DONE.
 */
export async function checkDocuments(call: Call, dataset: string, ledger: Ledger, final: boolean): Promise<{ findings: Finding[]; byRun: Record<string, number> }> {
  const expected = ledger.snapshot().documents;
  const docs = await listDocuments(call, dataset);
  const findings: Finding[] = [];
  const byRun: Record<string, number> = {};
  for (const doc of docs) {
    byRun[doc.run] = (byRun[doc.run] ?? 0) + 1;
    if (final && doc.run !== 'DONE') findings.push({ kind: 'document', problem: 'not done', detail: `${doc.name} ended ${doc.run}: ${doc.progress_msg ?? ''}`.slice(0, 300) });
    if (doc.run !== 'DONE') continue;
    const chunks = await listAll<{ content: string }>(call, `/datasets/${dataset}/documents/${doc.id}/chunks`, (d) => d.chunks, false);
    const distinct = new Set(chunks.map((c) => c.content)).size;
    if (chunks.length !== doc.chunk_count || distinct !== chunks.length) findings.push({ kind: 'document', problem: 'chunks', detail: `${doc.name}: chunk_count ${doc.chunk_count}, listed ${chunks.length}, distinct ${distinct}` });
  }
  const listedIds = new Set(docs.map((d) => d.id));
  const names = docs.map((d) => d.name.replace(/\(\d+\)(?=\.[^.]+$)/, ''));
  findings.push(...compare('document', 'dataset', [...expected.values()], names));
  for (const [id, name] of expected) if (!listedIds.has(id) && names.includes(name)) findings.push({ kind: 'document', problem: 'lost', detail: `${name}: acknowledged as ${id}, listed under another id` });
  return { findings, byRun };
}
