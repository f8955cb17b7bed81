import { flowing, type Extractor } from '../extractor.js';
import { guardJsonDepth } from '../json-guard.js';
import { decodeText } from '../text.js';
import type { Section } from '../types.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isScalar = (v: Json): v is null | boolean | number | string => v === null || typeof v !== 'object';
const scalar = (v: null | boolean | number | string): string => (v === null ? 'null' : String(v));

/** YAML-like lines: "key: value", nested objects indented, arrays of scalars joined by commas. */
function render(value: Json, indent: string): string[] {
  if (isScalar(value)) return [indent + scalar(value)];
  if (Array.isArray(value)) {
    if (value.every(isScalar)) return [indent + value.map(scalar).join(', ')];
    return value.flatMap((item) => {
      const lines = render(item, indent + '  ');
      if (lines.length > 0) lines[0] = `${indent}- ${lines[0].slice(indent.length + 2)}`;
      return lines;
    });
  }
  return Object.entries(value).flatMap(([key, v]) => {
    if (isScalar(v) || (Array.isArray(v) && v.every(isScalar))) return render(v, `${indent}${key}: `);
    return [`${indent}${key}:`, ...render(v, indent + '  ')];
  });
}

const section = (value: Json): Section | undefined => {
  const text = render(value, '').join('\n').trim();
  return text ? { kind: 'text', text } : undefined;
};

/** A top-level array gives one section per element; anything else one section. */
export const extractJson: Extractor = async (bytes, ctx) => {
  const text = decodeText(bytes);
  guardJsonDepth(text, ctx.filename, ctx.limits.nestingDepth);
  const value = JSON.parse(text) as Json;
  const items = Array.isArray(value) ? value : [value];
  return flowing(items.map(section).filter((s): s is Section => s !== undefined));
};

export const extractJsonLines: Extractor = async (bytes, ctx) => {
  const sections: Section[] = [];
  const text = decodeText(bytes);
  guardJsonDepth(text, ctx.filename, ctx.limits.nestingDepth);
  text
    .split(/\r?\n/)
    .forEach((line, i) => {
      if (line.trim() === '') return;
      let value: Json;
      try {
        value = JSON.parse(line) as Json;
      } catch (error) {
        throw new Error(`line ${i + 1}: ${(error as Error).message}`);
      }
      const s = section(value);
      if (s) sections.push(s);
    });
  return flowing(sections);
};
