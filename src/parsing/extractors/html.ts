import { flowing, type Extractor } from '../extractor.js';
import { htmlSections } from '../html.js';
import { decodeText } from '../text.js';

export const extractHtml: Extractor = async (bytes) => {
  const { sections, meta } = htmlSections(decodeText(bytes));
  return flowing(sections, meta);
};
