import { flowing, type Extractor } from '../extractor.js';
import { recognize } from '../ocr.js';
import { isImage } from '../sniff.js';

/** One image section: the recognised text, the paragraph boxes (pixels) and the original bytes. */
export const extractImage: Extractor = async (bytes) => {
  if (!isImage(bytes)) throw new Error('not PNG, JPEG, GIF, BMP, TIFF or WebP data');
  const { text, paragraphs } = await recognize(bytes);
  return flowing([
    {
      kind: 'image',
      text,
      page: 1,
      positions: paragraphs.map((p) => [1, p.x0, p.x1, p.top, p.bottom]),
      image: bytes,
    },
  ]);
};
