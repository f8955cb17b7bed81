/**
 * Writes the memory-quality set (bench/memory-quality/set.json) from the templates, reproducibly:
 *
 *   npx tsx bench/memory-quality/generate.ts [--seed 42] [--conversations 4] [--per-kind 8]
 *
 * Each conversation is one person talking to an assistant over six sessions a few weeks apart (dated).
 * It holds `per-kind` questions of each kind — single-hop, temporal ("when did…", answered by the
 * session date), multi-hop (two turns in different sessions, both needed) and knowledge update (a fact
 * changed in a later session; only the later turn is evidence) — plus everyday turns that answer nothing.
 * Multi-hop first halves come in the first three sessions and their second halves in the last three;
 * update first statements in the first two sessions, the changes in the last two.
 */
import fs from 'node:fs';
import { argument } from '../common.js';
import { prng } from '../retrieval/synthetic.js';
import { FILLERS, MULTI_HOP, SINGLE_HOP, SLOTS, TEMPORAL, UPDATES, type TurnText } from './templates.js';

export type QuestionKind = 'single-hop' | 'temporal' | 'multi-hop' | 'update';

export interface SetTurn {
  turn_id: string;
  user: string;
  agent: string;
  /** Unix seconds: the session's date plus a few minutes per turn. */
  valid_at: number;
  /** What a perfect extractor keeps from this turn. */
  facts: string[];
  /** Knowledge updates: the earlier facts these facts replace (what a perfect fact reconciler retires). */
  replaces?: string[];
}

export interface SetSession {
  session_id: string;
  date: string;
  turns: SetTurn[];
}

export interface SetConversation {
  conversation_id: string;
  sessions: SetSession[];
}

export interface SetQuestion {
  question_id: string;
  conversation_id: string;
  kind: QuestionKind;
  question: string;
  answer: string;
  /** The turns that hold the answer. */
  evidence: string[];
}

export interface MemoryQualitySet {
  seed: number;
  conversations: SetConversation[];
  questions: SetQuestion[];
}

const SESSIONS = 6;

export function generateSet(seed: number, conversations: number, perKind: number): MemoryQualitySet {
  const random = prng(seed);
  const shuffled = <T>(list: T[]) => {
    const out = [...list];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };
  const between = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const set: MemoryQualitySet = { seed, conversations: [], questions: [] };

  for (let c = 0; c < conversations; c++) {
    const conversationId = `c${c + 1}`;
    const persona = Object.fromEntries(Object.entries(SLOTS).map(([slot, values]) => [slot, values[c % values.length]!]));
    const fill = (text: string, date = '') => text.replace(/\{(\w+)\}/g, (_, slot: string) => (slot === 'date' ? date : persona[slot] ?? `{${slot}}`));
    const start = Date.UTC(2024, between(0, 5), between(1, 28), between(8, 19), 0, 0);
    const dates = Array.from({ length: SESSIONS }, (_, s) => start + s * between(12, 25) * 86_400_000 + s * 0);
    for (let s = 1; s < SESSIONS; s++) dates[s] = Math.max(dates[s]!, dates[s - 1]! + 7 * 86_400_000);
    const placed: { session: number; text: TurnText; id: string }[] = [];
    let turnSeq = 0;
    const place = (session: number, text: TurnText) => {
      const id = `${conversationId}-t${++turnSeq}`;
      const filled: TurnText = { user: fill(text.user), agent: fill(text.agent), facts: text.facts.map((f) => fill(f)) };
      if (text.replaces) filled.replaces = text.replaces.map((f) => fill(f));
      placed.push({ session, text: filled, id });
      return id;
    };
    const ask = (kind: QuestionKind, question: string, answer: string, evidence: string[]) => {
      set.questions.push({ question_id: `${conversationId}-q${set.questions.filter((q) => q.conversation_id === conversationId).length + 1}`, conversation_id: conversationId, kind, question: fill(question), answer, evidence });
    };
    for (const t of shuffled(SINGLE_HOP).slice(0, perKind)) ask('single-hop', t.question, fill(t.answer), [place(between(0, SESSIONS - 1), t.turn)]);
    for (const t of shuffled(TEMPORAL).slice(0, perKind)) {
      const session = between(0, SESSIONS - 1);
      ask('temporal', t.question, new Date(dates[session]!).toISOString().slice(0, 10), [place(session, t.turn)]);
    }
    for (const t of shuffled(MULTI_HOP).slice(0, perKind)) {
      const first = place(between(0, 2), t.first);
      ask('multi-hop', t.question, fill(t.answer), [first, place(between(3, SESSIONS - 1), t.second)]);
    }
    for (const t of shuffled(UPDATES).slice(0, perKind)) {
      place(between(0, 1), t.first);
      ask('update', t.question, fill(t.answer), [place(between(SESSIONS - 2, SESSIONS - 1), { ...t.second, replaces: t.first.facts })]);
    }
    for (const f of shuffled(FILLERS)) place(between(0, SESSIONS - 1), f);

    const sessions: SetSession[] = dates.map((date, s) => {
      const turns = shuffled(placed.filter((p) => p.session === s));
      return {
        session_id: `${conversationId}-s${s + 1}`,
        date: new Date(date).toISOString(),
        turns: turns.map((p, i) => ({ turn_id: p.id, ...p.text, valid_at: Math.floor(date / 1000) + i * 120 })),
      };
    });
    set.conversations.push({ conversation_id: conversationId, sessions });
  }
  return set;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const seed = Number(argument('seed', '42'));
  const set = generateSet(seed, Number(argument('conversations', '4')), Number(argument('per-kind', '8')));
  const out = new URL('./set.json', import.meta.url).pathname;
  fs.writeFileSync(out, `${JSON.stringify(set, null, 1)}\n`);
  const turns = set.conversations.reduce((n, c) => n + c.sessions.reduce((m, s) => m + s.turns.length, 0), 0);
  const kinds = new Map<string, number>();
  for (const q of set.questions) kinds.set(q.kind, (kinds.get(q.kind) ?? 0) + 1);
  console.log(`${out}: ${set.conversations.length} conversations, ${turns} turns, ${set.questions.length} questions (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')})`);
}
