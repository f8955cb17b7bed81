import assert from 'node:assert/strict';
import { CitationInserter, insertCitations } from '../../../src/chat/citations.js';

const chunks = [
  { content: 'Granite cairns mark the mountain trail crossings.' },
  { content: 'Hikers record the weather in a shared logbook every morning.' },
  { content: 'The river bend floods in spring.' },
];

describe('citation markers', () => {
  it('cites each sentence with the chunk sharing most of its words, before the closing punctuation', () => {
    const { answer, cited } = insertCitations('Cairns mark the trail crossings. Hikers record the weather in a logbook! Nothing else matters', chunks);
    assert.equal(answer, 'Cairns mark the trail crossings [ID:0]. Hikers record the weather in a logbook [ID:1]! Nothing else matters');
    assert.deepEqual(cited, [0, 1]);
  });

  it('cites a chunk once per answer and leaves sentences with too little overlap alone', () => {
    const { answer } = insertCitations('The river bend floods. The river bend floods again. Dogs bark loudly.', chunks);
    assert.equal(answer, 'The river bend floods [ID:2]. The river bend floods again. Dogs bark loudly.');
  });

  it('cites every chunk tied for the best overlap', () => {
    const tied = [{ content: 'alpha beta' }, { content: 'alpha beta gamma' }];
    assert.equal(insertCitations('Alpha beta.', tied).answer, 'Alpha beta [ID:0] [ID:1].');
  });

  it('does not split decimals, handles newlines and CJK full stops, and skips code blocks', () => {
    const { answer } = insertCitations('Trail crossings 3.5 km granite cairns\n```\ngranite cairns mark trail crossings.\n```\n河 river bend floods。', chunks);
    assert.equal(answer, 'Trail crossings 3.5 km granite cairns [ID:0]\n```\ngranite cairns mark trail crossings.\n```\n河 river bend floods [ID:2]。');
  });

  it('keeps sentences that already carry a marker as they are', () => {
    assert.equal(insertCitations('Granite cairns mark trail crossings [ID:1].', chunks).answer, 'Granite cairns mark trail crossings [ID:1].');
  });

  it('streams the same text however the answer is cut, only ever appending', () => {
    const text = 'Cairns mark the trail crossings. Hikers record the weather in a logbook?! The river bend floods.';
    const whole = insertCitations(text, chunks).answer;
    for (const size of [1, 2, 3, 7, 13]) {
      const inserter = new CitationInserter(chunks);
      let shown = '';
      for (let i = 0; i < text.length; i += size) {
        const before = shown;
        shown += inserter.push(text.slice(i, i + size));
        assert.ok(shown.startsWith(before));
      }
      shown += inserter.end();
      assert.equal(shown, whole, `pieces of ${size}`);
    }
    assert.equal(whole, 'Cairns mark the trail crossings [ID:0]. Hikers record the weather in a logbook [ID:1]?! The river bend floods [ID:2].');
  });

  it('holds back only a trailing run of sentence punctuation', () => {
    const inserter = new CitationInserter(chunks);
    assert.equal(inserter.push('Granite cairns mark trail crossings.'), 'Granite cairns mark trail crossings');
    assert.equal(inserter.push(' Then'), ' [ID:0]. Then');
    assert.equal(inserter.end(), '');
  });
});
