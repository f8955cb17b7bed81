import { stripThink } from '../../models/think.js';
import type { Extraction, RawEntity, RawRelation } from './types.js';
import { isRecord } from '../../records.js';

/**
 * Reading the model's graph answers. Models wrap JSON in fences and chatter, cut it off at their token
 * limit, or fall back to GraphRAG's tuple format; whatever can be read is used, whatever cannot is
 * counted (never an error: one bad answer must not fail a long job).
 */

export const MAX_NAME_CHARS = 200;
export const MAX_DESCRIPTION_CHARS = 2000;
const MAX_TYPE_CHARS = 64;
export const MAX_WEIGHT = 10;

/** The answer without reasoning and without a ``` fence around it. */
export function unfence(answer: string): string {
  const text = stripThink(answer).trim();
  const fenced = /```[\w-]*\s*\n?([\s\S]*?)(?:\n?```|$)/.exec(text);
  return fenced && /^\s*[[{]/.test(fenced[1]!) ? fenced[1]!.trim() : text;
}

/** A name as written, without surrounding quotes and extra spaces. */
export function cleanName(value: unknown): string {
  if (typeof value !== 'string' && typeof value !== 'number') return '';
  return String(value).replace(/\s+/g, ' ').replace(/^[\s"'`“”‘’«»*_]+|[\s"'`“”‘’«»*_]+$/gu, '').trim();
}

function cleanText(value: unknown, max: number): string {
  if (typeof value !== 'string') return '';
  const text = value.replace(/[ \t]+/g, ' ').trim();
  return text.length > max ? text.slice(0, max) : text;
}

function weightOf(value: unknown): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number.parseFloat(value) : NaN;
  return Number.isFinite(n) && n > 0 ? Math.min(n, MAX_WEIGHT) : 1;
}

function entityOf(item: Record<string, unknown>): RawEntity | undefined {
  const name = cleanName(item.name ?? item.entity_name ?? item.entity);
  if (!name || name.length > MAX_NAME_CHARS) return undefined;
  const type = cleanName(item.type ?? item.entity_type).toLowerCase().slice(0, MAX_TYPE_CHARS) || 'unknown';
  return { name, type, description: cleanText(item.description ?? item.entity_description, MAX_DESCRIPTION_CHARS) };
}

function relationOf(item: Record<string, unknown>): RawRelation | undefined {
  const source = cleanName(item.source ?? item.src_id ?? item.from);
  const target = cleanName(item.target ?? item.tgt_id ?? item.to);
  if (!source || !target || source.length > MAX_NAME_CHARS || target.length > MAX_NAME_CHARS) return undefined;
  if (source.toLowerCase() === target.toLowerCase()) return undefined;
  return {
    source,
    target,
    description: cleanText(item.description ?? item.relationship_description, MAX_DESCRIPTION_CHARS),
    weight: weightOf(item.weight ?? item.strength ?? item.relationship_strength),
  };
}

const isRelationLike = (o: Record<string, unknown>) => ('source' in o && 'target' in o) || ('src_id' in o && 'tgt_id' in o) || ('from' in o && 'to' in o);

/** JSON.parse, or undefined. */
function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The object closing at each `}` whose text parses on its own, innermost first: what is left of an answer
 * cut off or broken in the middle. Braces inside strings are skipped.
 */
function completeObjects(text: string): Record<string, unknown>[] {
  const found: Record<string, unknown>[] = [];
  const open: number[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') open.push(i);
    else if (c === '}' && open.length) {
      const parsed = tryJson(text.slice(open.pop()!, i + 1));
      if (isRecord(parsed)) found.push(parsed);
    }
  }
  return found;
}

/** GraphRAG's tuple format: ("entity"<|>NAME<|>TYPE<|>DESCRIPTION) and ("relationship"<|>SRC<|>TGT<|>DESCRIPTION<|>WEIGHT). */
function tupleItems(text: string): { entities: Record<string, unknown>[]; relations: Record<string, unknown>[] } {
  const entities: Record<string, unknown>[] = [];
  const relations: Record<string, unknown>[] = [];
  for (const m of text.matchAll(/\(\s*"?(entity|relationship)"?\s*<\|>([^()]*?)\)/giu)) {
    const parts = m[2]!.split('<|>').map((p) => p.trim());
    if (m[1]!.toLowerCase() === 'entity') entities.push({ name: parts[0], type: parts[1], description: parts[2] });
    else relations.push({ source: parts[0], target: parts[1], description: parts[2], weight: parts[parts.length - 1] });
  }
  return { entities, relations };
}

function listOf(obj: Record<string, unknown>, ...keys: string[]): unknown[] | undefined {
  for (const k of keys) if (Array.isArray(obj[k])) return obj[k] as unknown[];
  return undefined;
}

/**
 * The entities and relations of an extraction answer. The expected shape is
 * `{"entities": [{name, type, description}], "relations": [{source, target, description, weight}]}`; a
 * broken answer gives what its complete item objects (or GraphRAG tuples) hold. `withRelations` false
 * (the ner method) drops relations without counting them.
 */
export function parseExtraction(answer: string, withRelations = true): Extraction {
  const text = unfence(answer);
  let rawEntities: unknown[] = [];
  let rawRelations: unknown[] = [];
  let malformed = false;
  let whole = tryJson(text);
  if (!isRecord(whole)) {
    const start = text.indexOf('{');
    const end = text.lastIndexOf('}');
    whole = start >= 0 && end > start ? tryJson(text.slice(start, end + 1)) : undefined;
  }
  const lists = isRecord(whole) ? { entities: listOf(whole, 'entities', 'nodes'), relations: listOf(whole, 'relations', 'relationships', 'edges') } : undefined;
  if (lists && (lists.entities || lists.relations)) {
    rawEntities = lists.entities ?? [];
    rawRelations = lists.relations ?? [];
  } else if (text.trim()) {
    malformed = true;
    const objects = completeObjects(text);
    rawRelations = objects.filter(isRelationLike);
    rawEntities = objects.filter((o) => !isRelationLike(o) && ('name' in o || 'entity_name' in o));
    if (!rawEntities.length && !rawRelations.length) {
      const tuples = tupleItems(text);
      rawEntities = tuples.entities;
      rawRelations = tuples.relations;
    }
  }
  let skipped = 0;
  const entities: RawEntity[] = [];
  for (const item of rawEntities) {
    const e = isRecord(item) ? entityOf(item) : undefined;
    if (e) entities.push(e);
    else skipped++;
  }
  const relations: RawRelation[] = [];
  if (withRelations) {
    for (const item of rawRelations) {
      const r = isRecord(item) ? relationOf(item) : undefined;
      if (r) relations.push(r);
      else skipped++;
    }
  }
  return { entities, relations, skipped, malformed };
}

/**
 * The pairs the model confirmed in a resolution answer: one line per numbered pair, `1: yes` / `2. no`
 * (any order, extra words ignored). Pairs it did not answer are not confirmed.
 */
export function parseResolution(answer: string, pairs: number): Set<number> {
  const yes = new Set<number>();
  for (const line of unfence(answer).split('\n')) {
    const m = /^\s*(?:[-*]\s*)?(?:pair\s*|question\s*)?#?(\d{1,4})\s*[.):\-–]?\s*[:=]?\s*(?:\*\*)?\s*(yes|no|true|false)\b/iu.exec(line);
    if (!m) continue;
    const n = Number(m[1]);
    if (n < 1 || n > pairs) continue;
    const v = m[2]!.toLowerCase();
    if (v === 'yes' || v === 'true') yes.add(n - 1);
    else yes.delete(n - 1);
  }
  return yes;
}

export interface CommunityReport {
  title: string;
  summary: string;
  findings: { summary: string; explanation: string }[];
  rating: number;
}

/** A community report answer (`{title, summary, findings: [{summary, explanation}], rating}`), or undefined when unusable. */
export function parseCommunityReport(answer: string): CommunityReport | undefined {
  const text = unfence(answer);
  let parsed = tryJson(text);
  if (!isRecord(parsed)) {
    const start = text.indexOf('{');
    const end = text.lastIndexOf('}');
    parsed = start >= 0 && end > start ? tryJson(text.slice(start, end + 1)) : undefined;
  }
  if (!isRecord(parsed)) return undefined;
  const title = cleanText(parsed.title, 300);
  const summary = cleanText(parsed.summary ?? parsed.report, 8000);
  if (!title || !summary) return undefined;
  const findings = (Array.isArray(parsed.findings) ? parsed.findings : [])
    .map((f) => (isRecord(f) ? { summary: cleanText(f.summary, 500), explanation: cleanText(f.explanation, 2000) } : typeof f === 'string' ? { summary: cleanText(f, 500), explanation: '' } : undefined))
    .filter((f): f is { summary: string; explanation: string } => !!f && !!(f.summary || f.explanation))
    .slice(0, 10);
  const r = typeof parsed.rating === 'number' ? parsed.rating : Number.parseFloat(String(parsed.rating ?? ''));
  return { title, summary, findings, rating: Number.isFinite(r) ? Math.min(10, Math.max(0, r)) : 0 };
}
