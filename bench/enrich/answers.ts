/**
 * What the instant fake model answers to each prompt of the three enrichment jobs: answers of the shape
 * a real model gives (a keyword line, question lines, a title and summary, graph JSON), built from the
 * prompt's own text, so Cairn does all of its work on them (parsing, merging, ranking, storing). Served
 * by the shared fake OpenAI server (test/fakes), which also answers the embeddings.
 */
import { lastUserMessage, type AnswerScript, type FakeMessage } from '../../test/fakes/index.js';

const words = (text: string) => text.match(/[A-Za-z][A-Za-z0-9-]{3,}/g) ?? [];

/** The `n` longest distinct words of the text, in their order. */
function salientWords(text: string, n: number): string[] {
  const distinct = [...new Set(words(text).map((w) => w.toLowerCase()))];
  const longest = new Set([...distinct].sort((a, b) => b.length - a.length || a.localeCompare(b)).slice(0, n));
  return distinct.filter((w) => longest.has(w));
}

/** Capitalised words and acronyms after a sentence's first word: what a model would call the text's entities. */
function entityNames(text: string, max: number): string[] {
  const found = [...text.matchAll(/(?<=[a-z,;(] )([A-Z][A-Za-z0-9-]{1,}(?: [A-Z][A-Za-z0-9-]+)?)/g)].map((m) => m[1]!);
  return [...new Set(found)].slice(0, max);
}

const ENTITY_TYPES = ['organization', 'person', 'geo', 'event', 'category'];

function graphExtraction(text: string): string {
  const names = entityNames(text, 12);
  const sentenceOf = (name: string) => text.split(/(?<=\.)\s+/).find((s) => s.includes(name))?.slice(0, 200) ?? name;
  return JSON.stringify({
    entities: names.map((name, i) => ({ name, type: ENTITY_TYPES[i % ENTITY_TYPES.length], description: sentenceOf(name) })),
    relations: names.slice(1).map((name, i) => ({ source: names[i], target: name, description: `${names[i]} appears with ${name}.`, weight: 1 + (i % 5) })),
  });
}

const system = (messages: FakeMessage[]) => messages[0]?.content ?? '';

export const enrichmentAnswers: AnswerScript = (messages) => {
  const prompt = system(messages);
  const text = lastUserMessage(messages);
  if (prompt.includes('search keywords')) {
    const n = Number(/Give the (\d+) most important/.exec(prompt)?.[1] ?? 5);
    return { answer: salientWords(text, n).join(', ') };
  }
  if (prompt.includes('write the questions')) {
    const n = Number(/Give (\d+) question/.exec(prompt)?.[1] ?? 2);
    // Questions carry the passage's content (a chunk with questions is embedded by them).
    const sentences = text.split(/(?<=\.)\s+/).filter((x) => x.length > 20).slice(0, n);
    return { answer: sentences.map((x) => `Is it true that ${x.replace(/\.$/, '').slice(0, 200)}?`).join('\n') };
  }
  if (text.includes('Paragraphs:\n')) {
    const paragraphs = text.split('Paragraphs:\n')[1]!.split('\n');
    const firstSentences = paragraphs.map((p) => p.split(/(?<=\.)\s+/)[0]!).join(' ');
    return { answer: `${salientWords(firstSentences, 4).join(' ')}\n${firstSentences.split(' ').slice(0, 120).join(' ')}` };
  }
  if (prompt.startsWith('You build a knowledge graph')) {
    // The general method's second pass ("what was missed?") finds nothing more.
    if (messages.length > 2) return { answer: '{"entities": [], "relations": []}' };
    return { answer: graphExtraction(text) };
  }
  if (prompt.includes('mean the same real-world entity')) {
    const pairs = text.split('\n').filter((l) => /^\d+\./.test(l));
    return { answer: pairs.map((_, i) => `${i + 1}: no`).join('\n') };
  }
  if (prompt.includes('report about a community')) {
    const names = [...text.matchAll(/^- ([^(\n]+?) \(/gm)].map((m) => m[1]);
    return { answer: JSON.stringify({ title: `${names[0]} and related`, summary: `About ${names.slice(0, 8).join(', ')}.`, findings: [{ summary: `${names[0]} is central`, explanation: 'It has the most relations.' }], rating: 5 }) };
  }
  return { answer: 'ok' };
};
