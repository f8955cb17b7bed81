/**
 * The ingest bench's documents as the parse step turns them into texts to embed (the naive chunker's
 * chunks), cached in the temp dir: for the benches that feed the embedding model alone.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chunkDocument } from '../../src/chunking/index.js';
import { mergeParserConfig } from '../../src/chunking/parser-config.js';
import { extract } from '../../src/parsing/index.js';
import { embeddingText } from '../../src/services/chunk-vectors.js';
import { generateCorpus } from './corpus.js';

export interface DocumentTexts {
  title: string;
  chunks: string[];
}

export async function corpusTexts(pdfs: number, docx: number): Promise<DocumentTexts[]> {
  const dir = join(tmpdir(), 'cairn-bench-corpus-texts');
  const cached = join(dir, `texts-${pdfs}-${docx}.json`);
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, 'utf8')) as DocumentTexts[];
  const files = await generateCorpus({ pdfs, docx, pages: 10, paragraphsPerPage: 8, docxParagraphs: 20 });
  const config = mergeParserConfig('naive', 'document', {});
  const docs: DocumentTexts[] = [];
  for (const file of files) {
    const extracted = await extract(file.bytes, file.name);
    docs.push({ title: file.name, chunks: chunkDocument(extracted, 'naive', config, { filename: file.name }).map(embeddingText) });
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(cached, JSON.stringify(docs));
  return docs;
}
