/**
 * The components that run inside workflow code: Begin, UserFillUp, Switch, VariableAggregator, and the
 * pure halves of Categorize (its prompt, and reading the model's answer). Each is a function from
 * (params, run inputs / scope) to outputs, following RAGFlow's `agent/component/*.py`.
 *
 * PURE: no Node APIs, no I/O, deterministic (randomness comes in as a parameter). Imports only pure
 * modules and types.
 */
import type { CanvasDsl, InputField, Outputs, RunInputs } from '../dsl.js';
import { NEXT_OUTPUT } from '../dsl.js';
import { REF_PATTERN_SOURCE, resolveRef, stringifyValue, stripRef, type Scope } from '../refs.js';
import { isRecord } from '../../records.js';

type Params = Record<string, unknown>;

/** A chat message as model components receive it (structurally RunTypes' PromptMessage). */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}


/** Python truthiness: null, "", 0, false, [] and {} are false. */
export function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return false;
  if (typeof v === 'number' && Number.isNaN(v)) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isRecord(v)) return Object.keys(v).length > 0;
  return true;
}

// ---------------------------------------------------------------------------------------------------
// Begin

export const DEFAULT_PROLOGUE = "Hi! I'm your smart assistant. What can I do for you?";
export type BeginMode = 'conversational' | 'task' | 'Webhook';

function beginParams(dsl: Pick<CanvasDsl, 'components'>): Params {
  const params = dsl.components.begin?.obj.params;
  return isRecord(params) ? params : {};
}

/**
 * The prologue a new session opens with: Begin's `prologue` (RAGFlow's default when the key is absent);
 * "" when `enablePrologue` is false.
 */
export function prologue(dsl: Pick<CanvasDsl, 'components'>): string {
  const params = beginParams(dsl);
  if (params.enablePrologue === false) return '';
  if (!('prologue' in params)) return DEFAULT_PROLOGUE;
  return typeof params.prologue === 'string' ? params.prologue : '';
}

/** Begin's `mode`: conversational (default), task or Webhook. */
export function beginMode(dsl: Pick<CanvasDsl, 'components'>): BeginMode {
  const mode = beginParams(dsl).mode;
  return mode === 'task' || mode === 'Webhook' ? mode : 'conversational';
}

/** The declared form fields of a Begin / UserFillUp. */
export function formFields(params: Params): Record<string, InputField> {
  const inputs = params.inputs;
  if (!isRecord(inputs)) return {};
  const fields: Record<string, InputField> = {};
  for (const [key, def] of Object.entries(inputs)) fields[key] = isRecord(def) ? (def as InputField) : {};
  return fields;
}

function isFileType(type: unknown): boolean {
  return typeof type === 'string' && type.toLowerCase().includes('file');
}

/**
 * One runtime input to the value the component outputs (RAGFlow `_resolve_input_value`): `{value}` gives
 * its value; an `object` field given as JSON text is parsed; a bare (non-dict) input is the value itself.
 * File fields pass their descriptors through unchanged: reading the files is I/O, done outside workflow
 * code.
 */
export function inputValue(input: unknown): unknown {
  if (!isRecord(input)) return input === undefined ? null : input;
  const raw = input.value === undefined ? null : input.value;
  if (isFileType(input.type)) return input.optional && raw === null ? null : raw;
  if (input.type === 'object' && typeof raw === 'string' && raw.trim()) {
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  }
  return raw;
}

/**
 * Begin's outputs: one value per form field, from the run's `inputs` (`{field: {value}}`), else the
 * field's declared `value` (null when none). With no inputs at all, `sys.query` fills the form: a dict
 * query gives its matching keys; a scalar query fills the only field when the form has exactly one
 * (RAGFlow `Begin._merge_runtime_inputs`). Inputs for keys the form does not declare are output too, as
 * RAGFlow does.
 */
export function beginOutputs(params: Params, inputs: RunInputs | undefined | null, globals: Record<string, unknown>): Outputs {
  const fields = formFields(params);
  const merged = mergeBeginInputs(fields, inputs ?? {}, globals['sys.query']);
  const outputs: Outputs = {};
  for (const [key, field] of Object.entries(fields)) {
    outputs[key] = key in merged ? inputValue({ ...field, ...merged[key] }) : field.value === undefined ? null : field.value;
  }
  for (const [key, input] of Object.entries(merged)) {
    if (!(key in fields)) outputs[key] = inputValue(input);
  }
  return outputs;
}

function mergeBeginInputs(fields: Record<string, InputField>, inputs: Record<string, unknown>, query: unknown): Record<string, Record<string, unknown>> {
  const wrap = (v: unknown): Record<string, unknown> => (isRecord(v) ? v : { value: v });
  if (Object.keys(inputs).length) {
    return Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, wrap(v)]));
  }
  const keys = Object.keys(fields);
  if (!keys.length || query === null || query === undefined || query === '') return {};
  if (isRecord(query)) {
    return Object.fromEntries(Object.entries(query).filter(([k]) => keys.includes(k)).map(([k, v]) => [k, wrap(v)]));
  }
  if (keys.length === 1) return { [keys[0]!]: { value: query } };
  return {};
}

// ---------------------------------------------------------------------------------------------------
// UserFillUp

export const DEFAULT_TIPS = 'Please fill up the form';

/** Whether a form field counts as answered (RAGFlow `Canvas._is_input_field_satisfied`). */
export function isFieldSatisfied(field: InputField | undefined | null): boolean {
  if (!isRecord(field)) return field !== null && field !== undefined;
  const value = field.value;
  if (isFileType(field.type)) {
    if (field.optional && (value === null || value === undefined)) return true;
    return !(value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0));
  }
  return value !== null && value !== undefined;
}

export interface FillUpResult {
  /** Field values (null when unanswered) and, with `enable_tips`, the rendered `tips`. */
  outputs: Outputs;
  /** Fields still unanswered, in form order: non-empty means the run pauses here. */
  unsatisfied: string[];
  /** Every field with its current `value`. */
  fields: Record<string, InputField>;
  /** The `user_inputs` event data: only the unsatisfied fields, and the tips ("" when disabled). */
  event: { inputs: Record<string, InputField>; tips: string };
}

/**
 * Runs a UserFillUp (RAGFlow `UserFillUp._invoke` + the canvas wait check). With answers (`inputs`
 * non-empty) each answered field takes the answer and the others keep their declared `value`; with no
 * answers every field is cleared to null, except an optional file field (already satisfied when empty),
 * so a UserFillUp reached again pauses again.
 */
export function fillUp(params: Params, inputs: RunInputs | undefined | null, scope: Scope): FillUpResult {
  const declared = formFields(params);
  const answers = inputs ?? {};
  const answered = Object.keys(answers).length > 0;
  const fields: Record<string, InputField> = {};
  const outputs: Outputs = {};
  for (const [key, def] of Object.entries(declared)) {
    let value: unknown;
    if (answered) {
      if (key in answers) {
        const answer = answers[key];
        value = inputValue(isRecord(answer) ? { ...def, ...answer } : answer);
      } else {
        value = def.value === undefined ? null : def.value;
      }
    } else {
      value = isFileType(def.type) && def.optional ? (def.value === undefined ? null : def.value) : null;
    }
    fields[key] = { ...def, value };
    outputs[key] = value;
  }
  for (const [key, answer] of Object.entries(answers)) {
    if (!(key in declared)) outputs[key] = inputValue(answer);
  }
  const enableTips = params.enable_tips !== false;
  let tips = '';
  if (enableTips) {
    tips = renderTips(typeof params.tips === 'string' ? params.tips : DEFAULT_TIPS, scope);
    outputs.tips = tips;
  }
  const unsatisfied = Object.keys(fields).filter((k) => !isFieldSatisfied(fields[k]));
  const waiting: Record<string, InputField> = {};
  for (const k of unsatisfied) waiting[k] = fields[k]!;
  return { outputs, unsatisfied, fields, event: { inputs: waiting, tips } };
}

/** UserFillUp renders lists in its tips joined by "," (RAGFlow), other values as any template does. */
function renderTips(tips: string, scope: Scope): string {
  return tips.replace(new RegExp(REF_PATTERN_SOURCE, 'gi'), (_m, exp: string) => {
    const v = resolveRef(exp, scope);
    return Array.isArray(v) ? v.map(stringifyValue).join(',') : stringifyValue(v);
  });
}

// ---------------------------------------------------------------------------------------------------
// Switch

/** A number when `v` is one or is text that reads as one (not "", not NaN); else undefined. */
function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isNaN(v) ? undefined : v;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v.trim());
    return Number.isNaN(n) ? undefined : n;
  }
  return undefined;
}

function asText(v: unknown): string {
  return stringifyValue(v);
}

/**
 * One Switch test (RAGFlow `Switch.process_operator`): text operators compare case-insensitively;
 * `empty` is Python falsiness; `=`/`≠` and the orderings compare numerically when both sides are
 * numbers (or numeric text), else as text.
 */
export function compare(input: unknown, operator: string, value: unknown): boolean {
  switch (operator) {
    case 'contains':
      return asText(input).toLowerCase().includes(asText(value).toLowerCase());
    case 'not contains':
      return !asText(input).toLowerCase().includes(asText(value).toLowerCase());
    case 'start with':
      return asText(input).toLowerCase().startsWith(asText(value).toLowerCase());
    case 'end with':
      return asText(input).toLowerCase().endsWith(asText(value).toLowerCase());
    case 'empty':
      return !truthy(input);
    case 'not empty':
      return truthy(input);
  }
  const a = asNumber(input);
  const b = asNumber(value);
  if (a !== undefined && b !== undefined) return order(a, b, operator);
  return order(asText(input), asText(value), operator);
}

function order<T extends number | string>(x: T, y: T, operator: string): boolean {
  switch (operator) {
    case '=':
      return x === y;
    case '≠':
    case '!=':
      return x !== y;
    case '>':
      return x > y;
    case '<':
      return x < y;
    case '≥':
    case '>=':
      return x >= y;
    case '≤':
    case '<=':
      return x <= y;
  }
  throw new Error(`Not supported operator: ${operator}`);
}

interface SwitchItem {
  cpn_id?: string | null;
  operator?: string;
  value?: unknown;
}
interface SwitchCondition {
  logical_operator?: string;
  items?: SwitchItem[];
  to?: string[];
}

/**
 * The Switch's decision: the first condition whose items hold (`and`: all; `or`: any) sends the run to
 * its `to`, else `end_cpn_ids`. Items without `cpn_id` are skipped; a condition with no testable item
 * never holds. Outputs `{next: [node names], _next: [ids]}`; `nameOf` maps an id to the editor's node
 * name (default: the id).
 */
export function evaluateSwitch(params: Params, scope: Scope, nameOf: (id: string) => string = (id) => id): Outputs {
  const conditions = Array.isArray(params.conditions) ? (params.conditions as SwitchCondition[]) : [];
  const route = (ids: unknown): Outputs => {
    const next = Array.isArray(ids) ? ids.map(String) : [];
    return { next: next.map(nameOf), [NEXT_OUTPUT]: next };
  };
  for (const cond of conditions) {
    const any = (cond.logical_operator ?? 'and') !== 'and';
    const results: boolean[] = [];
    for (const item of cond.items ?? []) {
      if (!item.cpn_id) continue;
      const input = resolveRef(stripRef(item.cpn_id), scope);
      const ok = compare(input, String(item.operator ?? ''), item.value ?? '');
      results.push(ok);
      if (any && ok) return route(cond.to);
    }
    if (results.length && results.every(Boolean)) return route(cond.to);
  }
  return route(params.end_cpn_ids);
}

// ---------------------------------------------------------------------------------------------------
// VariableAggregator

interface AggregatorGroup {
  group_name?: string;
  variables?: { value?: string }[];
}

/** For each group, output `group_name` = its first truthy variable (absent when none is). */
export function aggregateVariables(params: Params, scope: Scope): Outputs {
  const outputs: Outputs = {};
  for (const group of Array.isArray(params.groups) ? (params.groups as AggregatorGroup[]) : []) {
    if (!group.group_name) continue;
    for (const variable of group.variables ?? []) {
      if (!variable || typeof variable.value !== 'string' || !variable.value) continue;
      const value = resolveRef(variable.value, scope);
      if (truthy(value)) {
        outputs[group.group_name] = value;
        break;
      }
    }
  }
  return outputs;
}

// ---------------------------------------------------------------------------------------------------
// Categorize

interface Category {
  description?: string | null;
  examples?: string[] | string | null;
  to?: string[];
}

function categories(params: Params): [string, Category][] {
  const desc = params.category_description;
  return isRecord(desc) ? Object.entries(desc).map(([name, c]) => [name, (isRecord(c) ? c : {}) as Category]) : [];
}

/** RAGFlow's `CategorizeParam.update_prompt`: the categories, their descriptions and examples. */
export function categorizeSystemPrompt(params: Params): string {
  const cats = categories(params);
  const exampleLines: string[] = [];
  for (const [name, c] of cats) {
    const examples = Array.isArray(c.examples) ? c.examples : typeof c.examples === 'string' ? [c.examples] : [];
    for (const line of examples) {
      if (!line) continue;
      exampleLines.push(`USER: "${String(line).replace(/\n/g, '    ')}" → ${name}`);
    }
  }
  const descriptions = cats.filter(([, c]) => c.description).map(([name, c]) => `\n------\nCategory: ${name}\nDescription: ${c.description}`);
  let prompt = `
You are an advanced classification system that categorizes user questions into specific types. Analyze the input question and classify it into ONE of the following categories:
${cats.map(([name]) => name).join('\n - ')}

Here's description of each category:
 - ${descriptions.join('\n')}

---- Instructions ----
 - Consider both explicit mentions and implied context
 - Prioritize the most specific applicable category
 - Return only the category name without explanations
 - Use "Other" only when no other category fits

 `;
  if (exampleLines.length) prompt += `\n---- Examples ----\n${exampleLines.join('\n')}\n`;
  return prompt;
}

/**
 * The messages of a Categorize call (RAGFlow `Categorize._invoke_async`): the system prompt listing the
 * categories, and one user message showing the conversation — `history` (earlier messages; the caller
 * applies `message_history_window_size`) followed by the query — asking for the category name only.
 */
export function categorizePrompt(params: Params, query: unknown, history: ReadonlyArray<{ role: string; content: unknown }> = []): ChatMessage[] {
  const convo = [...history.map((m) => ({ role: m.role, content: stringifyValue(m.content) })), { role: 'user', content: stringifyValue(query) }];
  const shown = convo.map((c) => `${c.role.toUpperCase()}: "${c.content.replace(/\n/g, '')}"`).join(' | ');
  return [
    { role: 'system', content: categorizeSystemPrompt(params) },
    { role: 'user', content: `\n---- Real Data ----\n${shown} →\n` },
  ];
}

/**
 * Reads the model's answer: the category whose name occurs most often in it (case-insensitive, spaces
 * around a name ignored — RAGFlow's own template has "Negative review "; first declared wins a tie),
 * else the LAST category. Returns `{category_name, _next}`.
 */
export function pickCategory(answer: string, params: Params): Outputs {
  const cats = categories(params);
  if (!cats.length) return { category_name: '', [NEXT_OUTPUT]: [] };
  const text = answer.toLowerCase();
  let best = cats[cats.length - 1]!;
  let bestCount = 0;
  for (const cat of cats) {
    const count = countOccurrences(text, cat[0].trim().toLowerCase());
    if (count > bestCount) {
      best = cat;
      bestCount = count;
    }
  }
  return { category_name: best[0], [NEXT_OUTPUT]: Array.isArray(best[1].to) ? [...best[1].to] : [] };
}

/** Non-overlapping occurrences, as Python's `str.count`. */
function countOccurrences(text: string, needle: string): number {
  if (!needle) return text.length + 1;
  let count = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) count++;
  return count;
}

// ---------------------------------------------------------------------------------------------------
// Message and helpers

/** A Message's templates: `content` as a list (a bare string is one template). */
export function messageTemplates(params: Params): string[] {
  const content = params.content;
  if (Array.isArray(content)) return content.map((c) => (typeof c === 'string' ? c : stringifyValue(c)));
  return typeof content === 'string' ? [content] : [];
}

/** One template chosen with `random` in [0, 1) (the caller supplies it: workflow code is deterministic). */
export function pickTemplate(params: Params, random: number): string {
  const templates = messageTemplates(params);
  if (!templates.length) return '';
  const idx = Math.min(templates.length - 1, Math.max(0, Math.floor(random * templates.length)));
  return templates[idx]!;
}

/** The editor's node name of a component (graph `nodes[].data.name`), "" when it has none. */
export function graphNodeName(dsl: Pick<CanvasDsl, 'graph'>, componentId: string): string {
  const graph = dsl.graph;
  if (!isRecord(graph) || !Array.isArray(graph.nodes)) return '';
  for (const node of graph.nodes) {
    if (isRecord(node) && node.id === componentId && isRecord(node.data) && typeof node.data.name === 'string') return node.data.name;
  }
  return '';
}

/** The last `n` exchanges (2n entries) of the DSL's `history` as chat messages (RAGFlow `get_history`). */
export function historyMessages(history: ReadonlyArray<readonly [string, unknown]>, n: number): ChatMessage[] {
  if (!(n > 0)) return [];
  return history.slice(-2 * Math.floor(n)).map(([role, content]) => ({
    role: role === 'assistant' ? 'assistant' : role === 'system' ? 'system' : 'user',
    content: isRecord(content) ? stringifyValue(content.content ?? '') : stringifyValue(content),
  }));
}
