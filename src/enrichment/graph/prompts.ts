import type { ChatMessage } from '../../models/types.js';
import type { EnrichmentCall } from '../cached-calls.js';
import type { GraphMethod } from './settings.js';
import type { GraphEntity, GraphRelation } from './types.js';

/**
 * The knowledge graph's model calls. Each is an EnrichmentCall: its cache key covers the prompt, so the
 * same text asked again (a resumed or repeated job) is answered from the cache.
 */

const EXTRACT_PROMPT = (types: string[], withRelations: boolean) => `You build a knowledge graph from a text.
Find the entities the text is about${withRelations ? ' and the relations between them' : ''}.

Entity types: ${types.join(', ')}.
- Each entity: "name" (as written in the text), "type" (one of the entity types), "description" (what the text says about it, in one or two sentences).
- Skip entities of other types, pronouns and generic words.${withRelations ? `
- Each relation: "source" and "target" (two entity names exactly as in your entities list), "description" (how the text relates them), "weight" (how strong the relation is, from 1 to 10).
- Only relations the text states; no relation of an entity to itself.` : ''}
- Use the language of the text.

Answer with one JSON object and nothing else:
${withRelations
    ? '{"entities": [{"name": "...", "type": "...", "description": "..."}], "relations": [{"source": "...", "target": "...", "description": "...", "weight": 5}]}'
    : '{"entities": [{"name": "...", "type": "...", "description": "..."}]}'}`;

const GLEAN_PROMPT = `Some entities and relations of the text may have been missed. Give only the missing ones, in the same JSON format; answer {"entities": [], "relations": []} if none were missed.`;

/** Room for the answer: a dense text has many entities. */
const EXTRACT_MAX_TOKENS = 2048;

/** Entities and relations per answer of the built-in model: bounded so its JSON always closes within max_tokens. */
const BUILTIN_MAX_ITEMS = 12;

/**
 * The answer's JSON Schema for the built-in chat model (a grammar: its answer always parses); other models
 * answer the prompt's format, read leniently by parseExtraction.
 */
export function extractionSchema(entityTypes: string[], withRelations: boolean): Record<string, unknown> {
  const text = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength });
  const entity = { type: 'object', properties: { name: text(80), type: entityTypes.length ? { enum: entityTypes } : text(40), description: text(200) }, required: ['name', 'type', 'description'] };
  const relation = { type: 'object', properties: { source: text(80), target: text(80), description: text(200), weight: { type: 'integer' } }, required: ['source', 'target', 'description', 'weight'] };
  const list = (items: unknown) => ({ type: 'array', items, maxItems: BUILTIN_MAX_ITEMS });
  return { type: 'object', properties: { entities: list(entity), ...(withRelations ? { relations: list(relation) } : {}) }, required: withRelations ? ['entities', 'relations'] : ['entities'] };
}

/** The first extraction call over a unit's text. */
export function extractionCall(text: string, entityTypes: string[], method: GraphMethod): EnrichmentCall {
  return {
    kind: 'graph-extract',
    messages: [
      { role: 'system', content: EXTRACT_PROMPT(entityTypes, method !== 'ner') },
      { role: 'user', content: `Text:\n${text}` },
    ],
    options: { temperature: 0, max_tokens: EXTRACT_MAX_TOKENS },
    builtinSchema: extractionSchema(entityTypes, method !== 'ner'),
  };
}

/** The general method's second pass: the first call, its answer and "what was missed?". */
export function gleaningCall(first: EnrichmentCall, firstAnswer: string): EnrichmentCall {
  const messages: ChatMessage[] = [...first.messages, { role: 'assistant', content: firstAnswer }, { role: 'user', content: GLEAN_PROMPT }];
  return { kind: 'graph-glean', messages, options: first.options, builtinSchema: first.builtinSchema };
}

/** Spelling candidates asked about per call. */
export const PAIRS_PER_CALL = 20;

const RESOLUTION_PROMPT = `You decide whether two names in a knowledge graph mean the same real-world entity (a spelling variant, a typo, an abbreviation) or two different ones.
Answer every numbered pair on its own line as "<number>: yes" (the same entity) or "<number>: no" (different entities), nothing else.`;

/** One call about up to PAIRS_PER_CALL pairs: name, type and a short description of each side. */
export function resolutionCall(pairs: [GraphEntity, GraphEntity][]): EnrichmentCall {
  const side = (e: GraphEntity) => `"${e.name}" (${e.type}${e.description ? `: ${clip(e.description.split('\n')[0]!, 160)}` : ''})`;
  const lines = pairs.map(([a, b], i) => `${i + 1}. ${side(a)} / ${side(b)}`);
  return {
    kind: 'graph-resolve',
    messages: [
      { role: 'system', content: RESOLUTION_PROMPT },
      { role: 'user', content: `Pairs:\n${lines.join('\n')}` },
    ],
    options: { temperature: 0, max_tokens: 16 + 8 * pairs.length },
  };
}

/** What a community report sees of a large community: its best-ranked members and strongest edges. */
export const REPORT_MAX_ENTITIES = 40;
export const REPORT_MAX_RELATIONS = 60;

const COMMUNITY_PROMPT = `You write a report about a community of a knowledge graph: a group of entities that are closely related.
Use only the entities and relations given. Answer with one JSON object and nothing else:
{"title": "a short name for the community", "summary": "what the community is about, in a few sentences", "findings": [{"summary": "one key insight", "explanation": "why, from the entities and relations"}], "rating": 5}
"rating" is how important the community is, from 0 to 10. Give at most 5 findings. Use the language of the entities' descriptions.`;

/** The report call of one community (members best-ranked first). */
export function communityCall(entities: GraphEntity[], relations: GraphRelation[]): EnrichmentCall {
  const names = new Map(entities.map((e) => [e.id, e.name]));
  const shown = entities.slice(0, REPORT_MAX_ENTITIES);
  const shownIds = new Set(shown.map((e) => e.id));
  const edges = relations.filter((r) => shownIds.has(r.source) && shownIds.has(r.target)).slice(0, REPORT_MAX_RELATIONS);
  const entityLines = shown.map((e) => `- ${e.name} (${e.type}): ${clip(e.description.replace(/\n/g, ' '), 300)}`);
  const relationLines = edges.map((r) => `- ${names.get(r.source)} -> ${names.get(r.target)} (weight ${round(r.weight)}): ${clip(r.description.replace(/\n/g, ' '), 300)}`);
  return {
    kind: 'graph-community',
    messages: [
      { role: 'system', content: COMMUNITY_PROMPT },
      { role: 'user', content: `Entities:\n${entityLines.join('\n')}\n\nRelations:\n${relationLines.join('\n') || '(none)'}` },
    ],
    options: { temperature: 0, max_tokens: 1024 },
  };
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
