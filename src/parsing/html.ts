import { parse, type HTMLElement, type Node, NodeType } from 'node-html-parser';
import { tableSection } from './sections.js';
import { squash } from './text.js';
import type { Section } from './types.js';

/** Elements whose content is never document text. */
const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'head', 'title', 'svg', 'iframe', 'object', 'embed', 'canvas']);
const LISTS = new Set(['ul', 'ol']);
const SKIPPED_IN_LIST_ITEM = new Set([...SKIPPED, ...LISTS]);
const BLOCKS = new Set([
  'address', 'article', 'aside', 'blockquote', 'body', 'caption', 'center', 'dd', 'details', 'dialog', 'div', 'dl',
  'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'header', 'hgroup', 'hr', 'html', 'li', 'main', 'nav',
  'p', 'section', 'summary', 'td', 'th', 'tr',
]);

const tagOf = (node: Node): string =>
  node.nodeType === NodeType.ELEMENT_NODE ? (node as HTMLElement).rawTagName?.toLowerCase() ?? '' : '';

const childElements = (el: HTMLElement): HTMLElement[] =>
  el.childNodes.filter((n) => n.nodeType === NodeType.ELEMENT_NODE) as HTMLElement[];

/** Visible text of a node on one line; block boundaries become spaces so words never fuse. */
function textOf(node: Node, skip: Set<string> = SKIPPED): string {
  const parts: string[] = [];
  const visit = (n: Node): void => {
    if (n.nodeType === NodeType.TEXT_NODE) {
      parts.push(n.text);
      return;
    }
    const tag = tagOf(n);
    if (n.nodeType !== NodeType.ELEMENT_NODE || skip.has(tag)) return;
    const spaced = BLOCKS.has(tag) || tag === 'br' || LISTS.has(tag);
    if (spaced) parts.push(' ');
    n.childNodes.forEach(visit);
    if (spaced) parts.push(' ');
  };
  visit(node);
  return squash(parts.join(''));
}

function tableRows(table: HTMLElement): string[][] {
  const rows: string[][] = [];
  const visit = (el: HTMLElement): void => {
    for (const child of childElements(el)) {
      const tag = tagOf(child);
      if (tag === 'tr') {
        rows.push(
          childElements(child)
            .filter((cell) => tagOf(cell) === 'td' || tagOf(cell) === 'th')
            .flatMap((cell) => {
              const span = Math.min(Math.max(Number(cell.getAttribute('colspan')) || 1, 1), 50);
              return [textOf(cell), ...Array<string>(span - 1).fill('')];
            }),
        );
      } else if (tag === 'thead' || tag === 'tbody' || tag === 'tfoot') {
        visit(child);
      }
    }
  };
  visit(table);
  return rows;
}

function listLines(list: HTMLElement, depth: number): string[] {
  const ordered = tagOf(list) === 'ol';
  let number = Number(list.getAttribute('start')) || 1;
  const lines: string[] = [];
  for (const item of childElements(list)) {
    if (tagOf(item) !== 'li') continue;
    const text = textOf(item, SKIPPED_IN_LIST_ITEM);
    if (text) lines.push(`${'  '.repeat(depth)}${ordered ? `${number}.` : '-'} ${text}`);
    number++;
    for (const nested of childElements(item)) {
      if (LISTS.has(tagOf(nested))) lines.push(...listLines(nested, depth + 1));
    }
  }
  return lines;
}

function dataUriBytes(src: string): Uint8Array | undefined {
  const match = /^data:image\/[\w.+-]+;base64,(.*)$/s.exec(src);
  return match ? new Uint8Array(Buffer.from(match[1], 'base64')) : undefined;
}

/** Walks the DOM in document order, emitting a section per heading, paragraph, list, table, pre or image. */
class SectionWalker {
  readonly sections: Section[] = [];
  private inline: string[] = [];

  visit(node: Node): void {
    if (node.nodeType === NodeType.TEXT_NODE) {
      this.inline.push(node.text);
      return;
    }
    if (node.nodeType !== NodeType.ELEMENT_NODE) return;
    const el = node as HTMLElement;
    const tag = tagOf(el);
    if (SKIPPED.has(tag)) return;

    const heading = /^h([1-6])$/.exec(tag);
    if (heading) {
      this.flush();
      const text = textOf(el);
      if (text) this.sections.push({ kind: 'title', text, level: Number(heading[1]) });
    } else if (tag === 'table') {
      this.flush();
      const caption = childElements(el).find((c) => tagOf(c) === 'caption');
      const section = tableSection(tableRows(el), caption ? { name: textOf(caption) } : {});
      if (section) this.sections.push(section);
    } else if (LISTS.has(tag)) {
      this.flush();
      const lines = listLines(el, 0);
      if (lines.length > 0) this.sections.push({ kind: 'text', text: lines.join('\n') });
    } else if (tag === 'pre') {
      this.flush();
      const code = el.text.replace(/^\n+|\s+$/g, '');
      if (code) this.sections.push({ kind: 'code', text: code });
    } else if (tag === 'img') {
      const image = dataUriBytes(el.getAttribute('src') ?? '');
      if (image) {
        this.flush();
        this.sections.push({ kind: 'image', text: squash(el.getAttribute('alt') ?? ''), image });
      }
    } else if (tag === 'br') {
      this.inline.push('\n');
    } else if (BLOCKS.has(tag)) {
      this.flush();
      el.childNodes.forEach((c) => this.visit(c));
      this.flush();
    } else {
      el.childNodes.forEach((c) => this.visit(c));
    }
  }

  flush(): void {
    const text = this.inline
      .join('')
      .split('\n')
      .map(squash)
      .filter(Boolean)
      .join('\n');
    this.inline = [];
    if (text) this.sections.push({ kind: 'text', text });
  }
}

/** Sections and meta (title, author) of an HTML document. Used for HTML files and for formats converted to HTML. */
export function htmlSections(html: string): { sections: Section[]; meta: Record<string, string> } {
  // node-html-parser keeps <!DOCTYPE> and <?xml?> declarations as text.
  const markup = html.replace(/<!doctype[^>]*>|<\?xml[^>]*\?>/gi, '');
  const root = parse(markup, { comment: false, blockTextElements: { script: true, style: true, noscript: true } });
  const walker = new SectionWalker();
  walker.visit(root);
  walker.flush();

  const meta: Record<string, string> = {};
  const title = root.querySelector('title');
  if (title && textOf(title, new Set())) meta.title = textOf(title, new Set());
  const author = root.querySelector('meta[name="author"]')?.getAttribute('content');
  if (author) meta.author = squash(author);
  return { sections: walker.sections, meta };
}
