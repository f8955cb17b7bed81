import path from 'node:path';
import type JSZip from 'jszip';
import type { Extractor } from '../extractor.js';
import { loadJSZip } from '../libraries.js';
import { corePropsOf, xmlPart } from '../ooxml.js';
import { tableSection } from '../sections.js';
import type { Section } from '../types.js';

// Matched by local name: the a:/p: prefixes are conventional, not guaranteed.
const childElements = (el: Element): Element[] => {
  const out: Element[] = [];
  for (let n = el.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) out.push(n as Element);
  return out;
};
const child = (el: Element | undefined, name: string): Element | undefined =>
  el && childElements(el).find((c) => c.localName === name);

function descendants(el: Element, name: string): Element[] {
  const out: Element[] = [];
  const visit = (e: Element): void => {
    for (const c of childElements(e)) {
      if (c.localName === name) out.push(c);
      else visit(c);
    }
  };
  visit(el);
  return out;
}

/** Text of one DrawingML paragraph: its runs and fields, with line breaks kept. */
function paragraphText(p: Element): string {
  const parts: string[] = [];
  const visit = (e: Element): void => {
    for (const c of childElements(e)) {
      if (c.localName === 't') parts.push(c.textContent ?? '');
      else if (c.localName === 'br') parts.push('\n');
      else visit(c);
    }
  };
  visit(p);
  return parts.join('').trim();
}

const textBodyLines = (body: Element): string[] => descendants(body, 'p').map(paragraphText).filter(Boolean);

function placeholderType(shape: Element): string | undefined {
  const ph = child(child(child(shape, 'nvSpPr'), 'nvPr'), 'ph');
  return ph ? ph.getAttribute('type') || 'body' : undefined;
}

/** Sections of one slide in shape-tree order: the title placeholder as a title, each text box, each table. */
function slideSections(tree: Element, page: number): Section[] {
  const sections: Section[] = [];
  const visit = (container: Element): void => {
    for (const shape of childElements(container)) {
      if (shape.localName === 'grpSp') {
        visit(shape);
      } else if (shape.localName === 'sp') {
        const body = child(shape, 'txBody');
        const lines = body ? textBodyLines(body) : [];
        if (lines.length === 0) continue;
        const type = placeholderType(shape);
        if (type === 'title' || type === 'ctrTitle') sections.push({ kind: 'title', text: lines.join(' '), level: 1, page });
        else sections.push({ kind: 'text', text: lines.join('\n'), page });
      } else if (shape.localName === 'graphicFrame') {
        for (const table of descendants(shape, 'tbl')) {
          const rows = descendants(table, 'tr').map((tr) => descendants(tr, 'tc').map((tc) => textBodyLines(tc).join(' ')));
          const section = tableSection(rows, { page });
          if (section) sections.push(section);
        }
      }
    }
  };
  visit(tree);
  return sections;
}

/** Slide part paths in presentation order (sldIdLst), resolved through the presentation's relationships. */
async function slidePaths(zip: JSZip): Promise<string[]> {
  const presentation = await xmlPart(zip, 'ppt/presentation.xml');
  if (!presentation) throw new Error('the package has no ppt/presentation.xml');
  const rels = await xmlPart(zip, 'ppt/_rels/presentation.xml.rels');
  const targets = new Map<string, string>();
  for (const rel of rels ? descendants(rels.documentElement!, 'Relationship') : []) {
    targets.set(rel.getAttribute('Id') ?? '', rel.getAttribute('Target') ?? '');
  }
  return descendants(presentation.documentElement!, 'sldId').flatMap((sldId) => {
    const target = targets.get(sldId.getAttribute('r:id') ?? '');
    if (!target) return [];
    return [target.startsWith('/') ? target.slice(1) : path.posix.join('ppt', target)];
  });
}

export const extractPptx: Extractor = async (bytes, ctx) => {
  const zip = await (await loadJSZip()).loadAsync(bytes);
  const paths = await slidePaths(zip);
  const sections: Section[] = [];
  for (const [i, part] of paths.entries()) {
    ctx.signal?.throwIfAborted();
    const slide = await xmlPart(zip, part);
    const tree = slide && descendants(slide.documentElement!, 'spTree')[0];
    if (tree) sections.push(...slideSections(tree, i + 1));
  }
  return { sections, pages: paths.length, meta: await corePropsOf(zip) };
};
