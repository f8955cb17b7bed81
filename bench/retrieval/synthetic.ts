import type { IndexedChunk } from '../../src/index/chunks/chunk-index.js';
import { beirAvailable, loadBeir } from '../quality/beir.js';

/** Deterministic PRNG (mulberry32) so that every run indexes and queries the same data. */
export { random as prng } from '../../test/fixtures/generate.js';

export function randomUnitVector(random: () => number, dims: number): number[] {
  // Box-Muller normals give directions uniform on the sphere.
  const v = Array.from({ length: dims }, () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random()));
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

export interface TextSource {
  sentences: string[];
  titles: string[];
  questions: string[];
}

/** Real scientific sentences (SciFact abstracts, re-mixed) when available, else Zipf-distributed words. */
export function textSource(random: () => number): TextSource {
  if (beirAvailable()) {
    const { corpus, queries } = loadBeir();
    const sentences = corpus.flatMap((d) => d.text.split(/(?<=\.)\s+/)).filter((s) => s.length > 20);
    return { sentences, titles: corpus.map((d) => d.title), questions: queries.map((q) => q.text) };
  }
  const vocabulary = Array.from({ length: 20_000 }, (_, i) => i.toString(36).replace(/\d/g, (d) => 'aeiouybcdf'[Number(d)]!));
  const word = () => vocabulary[Math.floor(vocabulary.length * random() ** 3)]!;
  const sentence = (n: number) => Array.from({ length: n }, word).join(' ') + '.';
  return {
    sentences: Array.from({ length: 50_000 }, () => sentence(8 + Math.floor(random() * 20))),
    titles: Array.from({ length: 5_000 }, () => sentence(6)),
    questions: Array.from({ length: 1_000 }, () => sentence(10)),
  };
}

/** The i-th synthetic chunk: 4–11 sentences (~100–300 words), 50 chunks per document, a 384-dim vector. */
export function syntheticChunk(i: number, source: TextSource, random: () => number, datasetId: string, dims = 384): IndexedChunk {
  const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)]!;
  const sentences = Array.from({ length: 4 + Math.floor(random() * 8) }, () => pick(source.sentences));
  const doc = Math.floor(i / 50);
  return {
    id: `chunk${i.toString(16).padStart(12, '0')}`,
    tenant_id: 'bench',
    dataset_id: datasetId,
    document_id: `doc${doc.toString(16).padStart(12, '0')}`,
    document_name: `${source.titles[doc % source.titles.length]!.slice(0, 80)}.pdf`,
    content: sentences.join(' '),
    important_keywords: random() < 0.1 ? [pick(source.titles).split(' ')[0]!] : [],
    questions: random() < 0.05 ? [pick(source.questions)] : [],
    tag_kwd: [],
    image_id: '',
    positions: [[1 + (i % 50), 0, 100, 10 * (i % 7), 10 * (i % 7) + 9]],
    available: true,
    create_time: '2025-01-01 00:00:00',
    create_timestamp: 1735689600 + i,
    vector: randomUnitVector(random, dims),
  };
}
