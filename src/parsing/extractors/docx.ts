import { flowing, type Extractor } from '../extractor.js';
import { htmlSections } from '../html.js';
import { loadJSZip, loadMammoth } from '../libraries.js';
import { corePropsOf } from '../ooxml.js';

/** Word's own title styles are not headings to mammoth by default. */
const STYLE_MAP = ["p[style-name='Title'] => h1:fresh", "p[style-name='Subtitle'] => h2:fresh"];

/** mammoth turns the document into semantic HTML (headings, lists, tables, inline images); the HTML walker does the rest. */
export const extractDocx: Extractor = async (bytes) => {
  const [JSZip, mammoth] = await Promise.all([loadJSZip(), loadMammoth()]);
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const zip = await JSZip.loadAsync(buffer);
  if (!zip.file('word/document.xml')) throw new Error('the package has no word/document.xml');
  const [{ value: html }, meta] = await Promise.all([mammoth.convertToHtml({ buffer }, { styleMap: STYLE_MAP }), corePropsOf(zip)]);
  return flowing(htmlSections(html).sections, meta);
};
