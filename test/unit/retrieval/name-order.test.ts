import assert from 'node:assert/strict';
import { NameOrder } from '../../../src/retrieval/name-order.js';
import { random as prng } from '../../fixtures/generate.js';

const collator = new Intl.Collator().compare;

/** Names built to be hard to order: case, accents, digits, punctuation, and pairs the collator finds equal. */
function names(random: () => number, count: number): string[] {
  const pieces = ['a', 'A', 'á', 'a\u0301', 'b', 'B', 'z', 'Z', 'é', 'e\u0301', '1', '10', '2', '-', ' ', '_', '.pdf', 'ß', 'ss', 'æ', 'ch', 'Ω', 'ж'];
  return Array.from({ length: count }, () => Array.from({ length: 1 + Math.floor(random() * 5) }, () => pieces[Math.floor(random() * pieces.length)]!).join(''));
}

/** The names sorted by place must be sorted by the collator, and equal places must be equal names to it. */
function assertCollationOrder(asked: string[], places: Uint32Array): void {
  const order = asked.map((name, i) => ({ name, place: places[i]! })).sort((a, b) => a.place - b.place);
  for (let i = 1; i < order.length; i++) {
    const [a, b] = [order[i - 1]!, order[i]!];
    const byCollator = collator(a.name, b.name);
    if (a.place === b.place) assert.equal(byCollator, 0, `${JSON.stringify(a.name)} and ${JSON.stringify(b.name)} share a place`);
    else assert.ok(byCollator < 0, `${JSON.stringify(a.name)} is placed before ${JSON.stringify(b.name)}`);
  }
}

describe('NameOrder (doc_aggs order of document names)', () => {
  it('places names in the collator\'s order, as names arrive over many retrievals', () => {
    const random = prng(3);
    const order = new NameOrder(collator);
    const seen: string[] = [];
    for (let call = 0; call < 40; call++) {
      const asked = [...names(random, 1 + Math.floor(random() * 60)), ...seen.slice(0, Math.floor(random() * 30))];
      const places = order.placesOf(asked)!;
      assert.equal(places.length, asked.length);
      assertCollationOrder(asked, places);
      seen.push(...asked);
    }
    // Every name seen so far, asked again at once, is in one consistent order.
    assertCollationOrder(seen, order.placesOf(seen)!);
  });

  it('gives names the collator finds equal the same place, and no other name', () => {
    const order = new NameOrder(collator);
    const places = order.placesOf(['é.pdf', 'b.pdf', 'e\u0301.pdf', 'a.pdf']);
    assert.equal(collator('é.pdf', 'e\u0301.pdf'), 0, 'the collator finds the two forms equal');
    assert.equal(places![0], places![2]);
    assert.deepEqual([places![3]! < places![1]!, places![1]! < places![0]!], [true, true]);
    // A form arriving later joins the place of the one already known.
    const later = order.placesOf(['e\u0301.pdf', 'é.pdf', 'c.pdf']);
    assert.equal(later![0], later![1]);
    assert.ok(later![2]! < later![0]!);
  });

  it('starts over past its bound, and is still in order', () => {
    const order = new NameOrder(collator, 10);
    assert.equal(order.placesOf(['d', 'c', 'b', 'a', 'e', 'f'])?.length, 6);
    assert.equal(order.size, 6);
    // Five new and one known name: eleven do not fit, so the order starts over with this call's six.
    const places = order.placesOf(['z', 'y', 'x', 'w', 'v', 'a']);
    assert.equal(order.size, 6);
    assertCollationOrder(['z', 'y', 'x', 'w', 'v', 'a'], places!);
    assert.equal(places![5], 0, "'a', known before, is placed again: first");
    // Eleven new names at once never fit: the caller sorts them itself.
    assert.equal(order.placesOf(names(prng(5), 200).map((n, i) => `${n}${i}`)), undefined);
  });

  it('answers undefined for more new names than its bound, which the caller sorts itself', () => {
    const order = new NameOrder(collator, 3);
    assert.equal(order.placesOf(['a', 'b', 'c', 'd']), undefined);
    assert.equal(order.size, 0);
  });
});
