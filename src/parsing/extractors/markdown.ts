import { marked } from 'marked';
import { flowing, type Extractor } from '../extractor.js';
import { htmlSections } from '../html.js';
import { decodeText } from '../text.js';

/** Rendered to HTML by marked (GFM), so headings, fences, lists and tables share the HTML walker. */
export const extractMarkdown: Extractor = async (bytes) => {
  const html = marked.parse(decodeText(bytes), { gfm: true, async: false });
  return flowing(htmlSections(html).sections);
};
