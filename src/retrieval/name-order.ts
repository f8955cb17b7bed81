/**
 * Document names' places in collation order, remembered across retrievals. doc_aggs puts every document
 * of a retrieval in order of name (~1,200 at 100k chunks): with the collator that is ~10,000 comparisons;
 * by remembered places, integer comparisons (the retrieval's share: bench/retrieval/run.ts). Two names share a place exactly when the
 * collator finds them equal, so ordering by place is ordering by the collator.
 */

/** Names remembered at most; past this the order starts over (like the tokenizer's stems). */
export const NAME_ORDER_LIMIT = 20_000;

export class NameOrder {
  /** Distinct names in collation order. */
  private names: string[] = [];
  /** Per name in `names`: the collator finds it equal to the one before. */
  private tied: boolean[] = [];
  private readonly places = new Map<string, number>();

  constructor(
    private readonly compare: (a: string, b: string) => number,
    private readonly limit = NAME_ORDER_LIMIT,
  ) {}

  /** Names remembered now (for /metrics and healthz). */
  get size(): number {
    return this.names.length;
  }

  /**
   * The place of each of these names, in their order: names not seen before are placed first, with ~log n
   * comparisons each. Undefined when those alone are more than the bound: sort them by the collator.
   */
  placesOf(names: readonly string[]): Uint32Array | undefined {
    const places = new Uint32Array(names.length);
    const unseen = new Set<string>();
    names.forEach((name, i) => {
      const place = this.places.get(name);
      if (place === undefined) unseen.add(name);
      else places[i] = place;
    });
    if (unseen.size === 0) return places;
    if (unseen.size > this.limit) return undefined;
    if (this.names.length + unseen.size > this.limit) {
      // Starting over: the names of this call that were known are new again.
      this.forget();
      for (const name of names) unseen.add(name);
      if (unseen.size > this.limit) return undefined;
    }
    // Own copies: a name sliced from a search's packed strings would keep all of them alive.
    this.insert([...unseen].map(ownCopy).sort(this.compare));
    // Every place after an inserted name moved: all are read again.
    names.forEach((name, i) => (places[i] = this.places.get(name)!));
    return places;
  }

  private forget(): void {
    this.names = [];
    this.tied = [];
    this.places.clear();
  }

  /** Merges `added` (sorted, none known) into the order; only pairs next to an added name are compared. */
  private insert(added: string[]): void {
    const names: string[] = [];
    const tied: boolean[] = [];
    let lastWasOld = false;
    let next = 0;
    const push = (name: string, tie: boolean, old: boolean) => {
      names.push(name);
      tied.push(tie);
      lastWasOld = old;
    };
    const copyOld = (end: number) => {
      for (; next < end; next++) {
        const name = this.names[next]!;
        push(name, lastWasOld ? this.tied[next]! : names.length > 0 && this.compare(names[names.length - 1]!, name) === 0, true);
      }
    };
    for (const name of added) {
      copyOld(this.lowerBound(name, next));
      push(name, names.length > 0 && this.compare(names[names.length - 1]!, name) === 0, false);
    }
    copyOld(this.names.length);
    this.names = names;
    this.tied = tied;
    let place = 0;
    for (let i = 0; i < names.length; i++) {
      if (i > 0 && !tied[i]) place++;
      this.places.set(names[i]!, place);
    }
  }

  /** The first position at or after `from` whose name does not sort before `name`. */
  private lowerBound(name: string, from: number): number {
    let lo = from;
    let hi = this.names.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(this.names[mid]!, name) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** A flat copy of a string that shares no memory with the string it was sliced from. */
function ownCopy(text: string): string {
  return Buffer.from(text, 'utf16le').toString('utf16le');
}
