import assert from 'node:assert/strict';
import { cleanExtraction, extractionSchema, extractionTokenBudget, ITEM_MAX_CHARS, SMALL_MODEL_ITEMS_PER_TYPE } from '../../../src/memories/structured.js';
import { assembleSystemPrompt } from '../../../src/memories/prompts.js';
import type { ExtractedItem } from '../../../src/memories/extraction.js';
import { nothingKeptMessage } from '../../../workflows/memory-extraction.js';

const item = (type: ExtractedItem['type'], content: string, ordinal = 0): ExtractedItem => ({ type, ordinal, content, valid_at: 1, invalid_at: null });

describe('memory extraction as structured output', () => {
  it('the schema asks for exactly the memory\'s types, each a bounded list of one-sentence items', () => {
    const schema = extractionSchema(['semantic', 'episodic']) as { properties: Record<string, { maxItems: number; items: { properties: { content: { maxLength: number } } } }>; required: string[] };
    assert.deepEqual(Object.keys(schema.properties), ['semantic', 'episodic']);
    assert.deepEqual(schema.required, ['semantic', 'episodic']);
    assert.equal(schema.properties.semantic!.maxItems, SMALL_MODEL_ITEMS_PER_TYPE);
    assert.equal(schema.properties.episodic!.items.properties.content.maxLength, ITEM_MAX_CHARS);
  });

  it('the token budget holds every list full, so the grammar\'s object always closes', () => {
    const full = SMALL_MODEL_ITEMS_PER_TYPE * 3 * (ITEM_MAX_CHARS / 3);
    assert.ok(extractionTokenBudget(['semantic', 'episodic', 'procedural']) > full);
    assert.ok(extractionTokenBudget(['semantic']) < extractionTokenBudget(['semantic', 'episodic']));
  });

  it('drops items without words (dots, a bare date), repeats and sentences copied from the instructions, and says so', () => {
    const prompt = assembleSystemPrompt(['raw', 'semantic', 'episodic']);
    const { items, note } = cleanExtraction(
      [
        item('semantic', 'The user walks the Cairngorms in May.'),
        item('semantic', '...', 1),
        item('semantic', '2026-12-05T00:47:47Z', 3),
        item('semantic', 'the user walks the Cairngorms in May', 2),
        item('episodic', "The user's daughter is called Mia and is allergic to peanuts."),
        item('episodic', 'The user packed for snow.', 1),
      ],
      prompt,
    );
    assert.deepEqual(items.map((i) => [i.type, i.ordinal, i.content]), [
      ['semantic', 0, 'The user walks the Cairngorms in May.'],
      ['episodic', 0, 'The user packed for snow.'],
    ]);
    assert.equal(note, 'dropped 2 without words, 1 repeated, 1 copied from the instructions instead of the conversation');
  });

  it('a turn with nothing kept closes its task saying why', () => {
    assert.equal(nothingKeptMessage(''), 'Done: nothing to remember in this turn (the model found no items in it)');
    assert.equal(nothingKeptMessage('dropped 2 repeated'), "Done: nothing to remember in this turn (the model's items were dropped: 2 repeated)");
  });
});
