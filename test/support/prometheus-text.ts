/**
 * A strict reader of the Prometheus text exposition format 0.0.4, for tests: it throws, naming the line,
 * on anything a Prometheus server would reject (bad names, label syntax or values, a sample without
 * its family's TYPE before it, a repeated series) and checks each histogram (cumulative buckets ending
 * in +Inf, which equals _count).
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  /** The sample's own name, e.g. `x_bucket` for a bucket of histogram `x`. */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set<MetricType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const SUFFIXES: Record<MetricType, string[]> = {
  counter: [''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((line, i) => {
    const fail = (why: string): never => {
      throw new Error(`exposition line ${i + 1}: ${why}: ${JSON.stringify(line)}`);
    };
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) return; // a plain comment
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!METRIC_NAME.test(name)) fail('invalid metric name');
      const family = families.get(name) ?? { name, type: 'untyped' as MetricType, help: '', samples: [] };
      if (kind === 'TYPE') {
        if (!TYPES.has(rest as MetricType)) fail('unknown type');
        if (family.samples.length) fail('TYPE after samples');
        family.type = rest as MetricType;
      } else {
        family.help = rest.replace(/\\n/g, '\n').replace(/\\\\/g, '\\');
      }
      families.set(name, family);
      return;
    }
    const sample = parseSample(line, fail);
    const family = familyOf(families, sample.name);
    if (!family) fail('sample without a # TYPE line for its family before it');
    const key = sample.name + JSON.stringify(Object.entries(sample.labels).sort());
    if (seen.has(key)) fail('repeated series');
    seen.add(key);
    family!.samples.push(sample);
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

function familyOf(families: Map<string, Family>, sampleName: string): Family | undefined {
  for (const f of families.values()) {
    if (SUFFIXES[f.type].some((s) => f.name + s === sampleName)) return f;
  }
  return undefined;
}

function parseSample(line: string, fail: (why: string) => never): Sample {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{)?/.exec(line);
  if (!m) fail('invalid metric name');
  const name = m![1]!;
  let pos = name.length;
  const labels: Record<string, string> = {};
  if (m![2]) {
    pos++;
    for (;;) {
      if (line[pos] === '}') {
        pos++;
        break;
      }
      const lm = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(line.slice(pos));
      if (!lm || !LABEL_NAME.test(lm[1]!)) fail('invalid label');
      pos += lm![0].length;
      let value = '';
      for (;;) {
        const c = line[pos++];
        if (c === undefined) fail('unterminated label value');
        if (c === '"') break;
        if (c === '\\') {
          const e = line[pos++];
          if (e === 'n') value += '\n';
          else if (e === '\\' || e === '"') value += e;
          else fail('invalid escape in label value');
        } else value += c;
      }
      if (lm![1]! in labels) fail('repeated label');
      labels[lm![1]!] = value;
      if (line[pos] === ',') pos++;
      else if (line[pos] !== '}') fail('expected , or } after a label');
    }
  }
  const rest = line.slice(pos);
  const vm = /^ (\S+)(?: (-?\d+))?$/.exec(rest);
  if (!vm) fail('expected " value [timestamp]"');
  return { name, labels, value: parseValue(vm![1]!, fail) };
}

function parseValue(text: string, fail: (why: string) => never): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) fail('invalid value');
  return Number(text);
}

/** Per series (labels other than `le`): buckets non-decreasing with `le`, ending in +Inf, equal to _count. */
function checkHistogram(f: Family): void {
  const series = new Map<string, { buckets: { le: number; value: number }[]; count?: number; sum?: number }>();
  const keyOf = (labels: Record<string, string>) =>
    JSON.stringify(Object.entries(labels).filter(([k]) => k !== 'le').sort());
  for (const s of f.samples) {
    const entry = series.get(keyOf(s.labels)) ?? { buckets: [] };
    series.set(keyOf(s.labels), entry);
    if (s.name.endsWith('_bucket')) {
      if (s.labels.le === undefined) throw new Error(`${f.name}: bucket without le`);
      entry.buckets.push({ le: s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), value: s.value });
    } else if (s.name.endsWith('_count')) entry.count = s.value;
    else entry.sum = s.value;
  }
  for (const [key, { buckets, count, sum }] of series) {
    const where = `${f.name}${key}`;
    if (count === undefined || sum === undefined) throw new Error(`${where}: _count or _sum missing`);
    const sorted = [...buckets].sort((a, b) => a.le - b.le);
    if (sorted.at(-1)?.le !== Infinity) throw new Error(`${where}: no +Inf bucket`);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i]!.value < sorted[i - 1]!.value) throw new Error(`${where}: buckets not cumulative at le=${sorted[i]!.le}`);
    }
    if (sorted.at(-1)!.value !== count) throw new Error(`${where}: +Inf bucket ${sorted.at(-1)!.value} differs from _count ${count}`);
  }
}

/** The value of the first sample of `name` whose labels include `labels` (undefined when there is none). */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value;
    }
  }
  return undefined;
}

/** The sum over every sample of `name` whose labels include `labels` (0 when there is none). */
export function sampleSum(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) total += s.value;
    }
  }
  return total;
}
