/**
 * One dataset's full-text index in memory: for every stem, the rows that contain it and how often
 * (weighted by column as bm25() weighs them), in typed arrays. A search scores the posting lists of the
 * question's words term by term into a dense accumulator and keeps the best `limit` rows, probing the long
 * lists of common words only for the rows that can still make it (max-score.ts): the same scores as
 * FTS5's bm25() (fts5-bm25.ts), without SQL per matched row.
 */
import type { HitRow } from '../chunks/sqlite-statements.js';
import { K1, lengthTerm, type TableTotals } from './fts5-bm25.js';
import { maxScoreTopRows, SearchBuffers, type PostingLists, type SearchCounters, type TermWord } from './max-score.js';
import { bestRows, type TopRows } from '../vectors/top-rows.js';
import { WordTerms } from './word-terms.js';

/** A chunk_rows row as the build reads it (lists as stored: JSON arrays). */
export interface PostingSourceRow {
  rowid: number;
  id: string;
  document_id: string;
  document_name: string;
  available: number;
  content: string;
  important_keywords: string;
  questions: string;
}

/** A question's word: its stem and its idf over the whole table. */
export interface WeightedStem {
  stem: string;
  idf: number;
}

export interface PostingFilter {
  availableOnly?: boolean;
  /** Only chunks of these documents. */
  documentIds?: ReadonlySet<string>;
}

/**
 * Column weights of bm25(chunk_fts, …) in the order the build reads the columns (title = document name,
 * content, keywords, questions); the `scope` column (weight 0) adds one token to every row's length.
 */
const WEIGHTS = { title: 5, content: 1, keywords: 15, questions: 10 } as const;
const SCOPE_TOKENS = 1;

/** A Uint32Array that grows by doubling. */
class GrowingU32 {
  data = new Uint32Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new Uint32Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = value;
  }
}

export class DatasetPostings {
  private byteCount = -1;
  /**
   * Search scratch: per row its score so far (0 between searches), as Float32 so that the 4 bytes per row
   * stay in the caches (max-score.ts keeps the hits exact).
   */
  private readonly sums: Float32Array;
  /** searchEveryPosting's float64 accumulator (0 between searches), made at its first search. */
  private referenceSums?: Float64Array;
  /** Search scratch: a bit per row (max-score.ts sorts its candidates with it). */
  private readonly marks: Uint32Array;
  /** Search scratch: the bounded search's other arrays, grown as searches need. */
  private readonly buffers = new SearchBuffers();
  /** Every row is available: the availability filter lets every row through. */
  private readonly allAvailable: boolean;

  private constructor(
    readonly datasetId: string,
    private readonly ids: string[],
    /** Per row: index into `documents`. */
    private readonly documentOf: Uint32Array,
    /** [document_id, document_name] */
    private readonly documents: [string, string][],
    private readonly available: Uint8Array,
    /** Per row: tokens in all columns (bm25's D). */
    private readonly lengths: Uint16Array | Uint32Array,
    private readonly terms: Map<string, number>,
    /** Term t's postings are [offsets[t], offsets[t + 1]). */
    private readonly offsets: Uint32Array,
    /** Rows (ascending row ids within each term). */
    private readonly postingRows: Uint32Array,
    /** Column-weighted occurrences. */
    private readonly postingFreqs: Uint16Array | Uint32Array,
    /** Per term, for the words' upper bounds (max-score.ts): its largest weighted occurrences and its shortest row. */
    private readonly maxFreqs: Uint16Array | Uint32Array,
    private readonly minLengths: Uint32Array,
    private readonly touched: Uint32Array,
  ) {
    this.sums = new Float32Array(ids.length);
    this.marks = new Uint32Array((ids.length + 31) >>> 5);
    this.allAvailable = available.every((flag) => flag === 1);
  }

  /** Builds from the dataset's rows, which must come in ascending rowid order. */
  static build(datasetId: string, rows: Iterable<PostingSourceRow>): DatasetPostings {
    const ids: string[] = [];
    const documentOf = new GrowingU32();
    const documents: [string, string][] = [];
    const documentIndex = new Map<string, number>();
    const availableFlags: number[] = [];
    const lengths = new GrowingU32();
    const words = new WordTerms();
    const entryTerms = new GrowingU32();
    const entryFreqs = new GrowingU32();
    const rowEnds = new GrowingU32();
    // The current row's terms and their weighted occurrences (freqInRow[t] is 0 outside the row).
    const freqInRow: number[] = [];
    const rowTerms: number[] = [];
    let weight = 0;
    let maxFreq = 0;
    const count = (t: number) => {
      while (freqInRow.length <= t) freqInRow.push(0);
      if (freqInRow[t] === 0) rowTerms.push(t);
      freqInRow[t]! += weight;
    };
    const add = (text: string, columnWeight: number): number => {
      weight = columnWeight;
      return words.forEachTerm(text, count);
    };

    for (const row of rows) {
      ids.push(row.id);
      const documentKey = `${row.document_id}\u0000${row.document_name}`;
      let d = documentIndex.get(documentKey);
      if (d === undefined) {
        d = documents.push([row.document_id, row.document_name]) - 1;
        documentIndex.set(documentKey, d);
      }
      documentOf.push(d);
      availableFlags.push(row.available === 1 ? 1 : 0);
      const length = add(row.document_name, WEIGHTS.title)
        + add(row.content, WEIGHTS.content)
        + add((JSON.parse(row.important_keywords) as string[]).join('\n'), WEIGHTS.keywords)
        + add((JSON.parse(row.questions) as string[]).join('\n'), WEIGHTS.questions)
        + SCOPE_TOKENS;
      lengths.push(length);
      for (const t of rowTerms) {
        const f = freqInRow[t]!;
        entryTerms.push(t);
        entryFreqs.push(f);
        if (f > maxFreq) maxFreq = f;
        freqInRow[t] = 0;
      }
      rowTerms.length = 0;
      rowEnds.push(entryTerms.length);
    }

    // Counting sort of the (row, term) entries by term; rows stay ascending within each term.
    const { terms } = words;
    const offsets = new Uint32Array(terms.size + 1);
    for (let e = 0; e < entryTerms.length; e++) offsets[entryTerms.data[e]! + 1]!++;
    for (let t = 0; t < terms.size; t++) offsets[t + 1]! += offsets[t]!;
    const cursor = offsets.slice(0, terms.size);
    const postingRows = new Uint32Array(entryTerms.length);
    const postingFreqs = maxFreq <= 0xffff ? new Uint16Array(entryTerms.length) : new Uint32Array(entryTerms.length);
    for (let r = 0, e = 0; r < ids.length; r++) {
      for (const end = rowEnds.data[r]!; e < end; e++) {
        const at = cursor[entryTerms.data[e]!]!++;
        postingRows[at] = r;
        postingFreqs[at] = entryFreqs.data[e]!;
      }
    }
    const n = ids.length;
    // Two bytes per row when they hold every length: the search reads a row's length at every posting.
    const rowLengths = lengths.data.subarray(0, n);
    const shortRows = rowLengths.every((length) => length <= 0xffff);
    const maxFreqs = maxFreq <= 0xffff ? new Uint16Array(terms.size) : new Uint32Array(terms.size);
    const minLengths = new Uint32Array(terms.size).fill(0xffffffff);
    for (let t = 0; t < terms.size; t++) {
      for (let p = offsets[t]!, end = offsets[t + 1]!; p < end; p++) {
        if (postingFreqs[p]! > maxFreqs[t]!) maxFreqs[t] = postingFreqs[p]!;
        const length = lengths.data[postingRows[p]!]!;
        if (length < minLengths[t]!) minLengths[t] = length;
      }
    }
    return new DatasetPostings(
      datasetId, ids, documentOf.data.slice(0, n), documents, Uint8Array.from(availableFlags), shortRows ? Uint16Array.from(rowLengths) : rowLengths.slice(),
      terms, offsets, postingRows, postingFreqs, maxFreqs, minLengths, new Uint32Array(n),
    );
  }

  get rowCount(): number {
    return this.ids.length;
  }

  /** Tokens of all rows (bm25's D, summed). */
  get tokenCount(): number {
    let tokens = 0;
    for (let r = 0; r < this.lengths.length; r++) tokens += this.lengths[r]!;
    return tokens;
  }

  /** Distinct stems. */
  get termCount(): number {
    return this.terms.size;
  }

  /** Bytes of the per-term bounds (largest occurrences, shortest row) the bounded search reads. */
  get boundBytes(): number {
    return this.maxFreqs.byteLength + this.minLengths.byteLength;
  }

  /** Postings held (row, stem pairs). */
  get postingCount(): number {
    return this.postingRows.length;
  }

  /** Rows whose text contains the stem. */
  rowsWith(stem: string): number {
    const t = this.terms.get(stem);
    return t === undefined ? 0 : this.offsets[t + 1]! - this.offsets[t]!;
  }

  /** Bytes held: the typed arrays, the scratch, and an estimate for the strings and the term map. */
  get bytes(): number {
    if (this.byteCount < 0) this.byteCount = this.countBytes();
    return this.byteCount + this.buffers.bytes;
  }

  private countBytes(): number {
    let bytes = this.documentOf.byteLength + this.available.byteLength + this.lengths.byteLength + this.offsets.byteLength
      + this.postingRows.byteLength + this.postingFreqs.byteLength + this.maxFreqs.byteLength + this.minLengths.byteLength
      + this.sums.byteLength + this.touched.byteLength + this.marks.byteLength;
    const stringBytes = (s: string) => 16 + s.length;
    for (const id of this.ids) bytes += 8 + stringBytes(id);
    for (const [id, name] of this.documents) bytes += 24 + stringBytes(id) + stringBytes(name);
    for (const stem of this.terms.keys()) bytes += 40 + stringBytes(stem);
    return bytes;
  }

  /**
   * The best `limit` rows that pass the filter, best first (ties: earlier row first), as hits with FTS5's
   * bm25() score (positive). Words are scored in the order given, as FTS5 adds up its phrases. Bounded
   * top-k (max-score.ts): the long lists of common words are probed for the leading rows, not scanned.
   */
  search(words: WeightedStem[], totals: TableTotals, filter: PostingFilter, limit: number, counters?: SearchCounters): HitRow[] {
    const termWords = this.termWords(words);
    const lists: PostingLists = {
      offsets: this.offsets, rows: this.postingRows, freqs: this.postingFreqs, maxFreqs: this.maxFreqs, minLengths: this.minLengths,
    };
    const top = maxScoreTopRows(lists, termWords, { sums: this.sums, lengths: this.lengths, touched: this.touched, marks: this.marks, buffers: this.buffers }, totals.averageLength, this.rowFilter(filter), limit, counters);
    return this.hits(top);
  }

  /**
   * The same hits as `search`, from every posting of every word scored in float64 into an accumulator of
   * its own, in the order given: the reference the bounded search must equal (tests and benches).
   */
  searchEveryPosting(words: WeightedStem[], totals: TableTotals, filter: PostingFilter, limit: number, counters?: SearchCounters): HitRow[] {
    const { touched, postingRows, postingFreqs, offsets, lengths } = this;
    const scores = this.referenceSums ??= new Float64Array(this.rowCount);
    let touchedCount = 0;
    try {
      for (const { term, idf } of this.termWords(words)) {
        for (let p = offsets[term]!, end = offsets[term + 1]!; p < end; p++) {
          const r = postingRows[p]!;
          const f = postingFreqs[p]!;
          if (scores[r] === 0) touched[touchedCount++] = r;
          scores[r]! += idf * ((f * (K1 + 1)) / (f + lengthTerm(lengths[r]!, totals.averageLength)));
        }
        if (counters) counters.postings += offsets[term + 1]! - offsets[term]!;
      }
      const passes = this.rowFilter(filter);
      const rows = new Uint32Array(touchedCount);
      const rowScores = new Float64Array(touchedCount);
      let n = 0;
      for (let i = 0; i < touchedCount; i++) {
        const r = touched[i]!;
        if (passes && !passes(r)) continue;
        rows[n] = r;
        rowScores[n++] = scores[r]!;
      }
      return this.hits(bestRows(rows, rowScores, n, limit));
    } finally {
      for (let i = 0; i < touchedCount; i++) scores[touched[i]!] = 0;
    }
  }

  /** The words found in this copy, as terms, in the order given. */
  private termWords(words: WeightedStem[]): TermWord[] {
    const found: TermWord[] = [];
    for (const { stem, idf } of words) {
      const term = this.terms.get(stem);
      if (term !== undefined) found.push({ term, idf });
    }
    return found;
  }

  /** Which rows pass the filter; undefined when every row does (no call per row then). */
  private rowFilter(filter: PostingFilter): ((row: number) => boolean) | undefined {
    const { available, documentOf } = this;
    const allowedDocuments = filter.documentIds
      ? Uint8Array.from(this.documents, ([id]) => (filter.documentIds!.has(id) ? 1 : 0))
      : undefined;
    const availableOnly = filter.availableOnly === true && !this.allAvailable;
    if (allowedDocuments) return (r) => (!availableOnly || available[r] === 1) && allowedDocuments[documentOf[r]!] === 1;
    return availableOnly ? (r) => available[r] === 1 : undefined;
  }

  private hits({ rows, scores }: TopRows): HitRow[] {
    return Array.from(rows, (r, i) => {
      const [documentId, documentName] = this.documents[this.documentOf[r]!]!;
      return [this.ids[r]!, scores[i]!, this.datasetId, documentId, documentName];
    });
  }
}
