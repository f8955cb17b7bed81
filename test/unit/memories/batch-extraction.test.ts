import assert from 'node:assert/strict';
import { buildBatchUserPrompt, parseBatchExtraction } from '../../../src/memories/batch-extraction.js';
import { MAX_ITEMS_PER_TYPE } from '../../../src/memories/types.js';

const T1 = Date.UTC(2026, 0, 1, 9);
const T2 = Date.UTC(2026, 0, 2, 9);
const turns = [
  { conversation: 'User Input: I moved to Oslo\nAgent Response: Nice', conversationTime: T1 },
  { conversation: 'User Input: My dog is called Rex\nAgent Response: Cute', conversationTime: T2 },
];

describe('several turns in one extraction call: the prompt and the answer', () => {
  it('numbers the turns, each with its own time, and asks for a turn field on every item', () => {
    const prompt = buildBatchUserPrompt({ turns, now: T2 + 1000 });
    assert.match(prompt, /^Extract the memory items from these conversation turns/);
    assert.match(prompt, /give every item a "turn" field/);
    assert.match(prompt, /Turn 1\nConversation:\nUser Input: I moved to Oslo\nAgent Response: Nice\n\nConversation Time: 2026-01-01T09:00:00Z\n\nTurn 2\nConversation:\nUser Input: My dog/);
    assert.match(prompt, /Conversation Time: 2026-01-02T09:00:00Z\n\nCurrent Time: 2026-01-02T09:00:01Z$/);
    assert.match(buildBatchUserPrompt({ userPrompt: 'Mind the dogs.', turns, now: T2 }), /^Mind the dogs\.\n\nThe 2 turns below/);
  });

  it('gives each turn its own items: ordinals per turn and type, valid_at falling back to the turn\'s time', () => {
    const answer = JSON.stringify({
      semantic: [
        { turn: 2, content: 'The user has a dog called Rex.' },
        { turn: '1', content: 'The user lives in Oslo.', valid_at: '2025-12-31T00:00:00Z' },
        { turn: 'Turn 2', content: 'Rex is cute.' },
      ],
      episodic: [{ turn: 1, content: 'The user moved to Oslo.', invalid_at: '2026-02-01T00:00:00Z' }],
      procedural: [{ turn: 1, content: 'ignored: not a type of this memory' }],
    });
    const [one, two] = parseBatchExtraction(answer, ['semantic', 'episodic'], turns);
    assert.deepEqual(one, [
      { type: 'semantic', ordinal: 0, content: 'The user lives in Oslo.', valid_at: Date.UTC(2025, 11, 31), invalid_at: null },
      { type: 'episodic', ordinal: 0, content: 'The user moved to Oslo.', valid_at: T1, invalid_at: Date.UTC(2026, 1, 1) },
    ]);
    assert.deepEqual(two!.map((i) => [i.ordinal, i.content, i.valid_at]), [[0, 'The user has a dog called Rex.', T2], [1, 'Rex is cute.', T2]]);
  });

  it(`keeps at most ${MAX_ITEMS_PER_TYPE} items of a type per turn (the first ones)`, () => {
    const many = Array.from({ length: 8 }, (_, i) => ({ turn: 1, content: `Fact number ${i} about the user.` }));
    const [one, two] = parseBatchExtraction(JSON.stringify({ semantic: [...many, { turn: 2, content: 'Rex barks.' }] }), ['semantic'], turns);
    assert.equal(one!.length, MAX_ITEMS_PER_TYPE);
    assert.equal(one!.at(-1)!.content, `Fact number ${MAX_ITEMS_PER_TYPE - 1} about the user.`);
    assert.deepEqual(two!.map((i) => i.content), ['Rex barks.']);
  });

  it('an item without a turn of the batch is an UnattributedItemsError; an answer that is no JSON object an InvalidExtractionError', () => {
    assert.throws(() => parseBatchExtraction(JSON.stringify({ semantic: [{ content: 'The user lives in Oslo.' }] }), ['semantic'], turns), { name: 'UnattributedItemsError', message: /names no turn of the 2 asked about \(turn: null\)/ });
    assert.throws(() => parseBatchExtraction(JSON.stringify({ semantic: [{ turn: 3, content: 'x y' }] }), ['semantic'], turns), { name: 'UnattributedItemsError' });
    assert.throws(() => parseBatchExtraction('Sure! {semantic: [', ['semantic'], turns), { name: 'InvalidExtractionError' });
    assert.throws(() => parseBatchExtraction('{"semantic": "Oslo"}', ['semantic'], turns), { name: 'InvalidExtractionError', message: /must be a list/ });
  });
});
