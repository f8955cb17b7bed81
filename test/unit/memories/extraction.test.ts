import assert from 'node:assert/strict';
import { InvalidExtractionError, normaliseTime, parseExtraction, stripFences } from '../../../src/memories/extraction.js';

const T = Date.UTC(2025, 0, 1);
const ALL = ['semantic', 'episodic', 'procedural'] as const;

describe('memories: parsing extraction answers', () => {
  it('reads the items of every requested type with their ordinal, content and normalised times', () => {
    const answer = JSON.stringify({
      semantic: [{ content: 'The user likes tea.', valid_at: '2024-05-01T10:00:00+02:00', invalid_at: null }],
      episodic: [{ content: 'The user visited Rome.', valid_at: '2024-06-01', invalid_at: '2024-06-10 12:00:00' }],
      procedural: [],
    });
    const items = parseExtraction(answer, ALL, T);
    assert.deepEqual(items, [
      { type: 'semantic', ordinal: 0, content: 'The user likes tea.', valid_at: Date.UTC(2024, 4, 1, 8), invalid_at: null },
      { type: 'episodic', ordinal: 0, content: 'The user visited Rome.', valid_at: Date.UTC(2024, 5, 1), invalid_at: Date.UTC(2024, 5, 10, 12) },
    ]);
  });

  it('strips Markdown fences and <think> blocks around the JSON', () => {
    const body = '{"semantic":[{"content":"A fact."}]}';
    for (const answer of ['```json\n' + body + '\n```', '```\n' + body + '```', `<think>hmm</think>\n${body}`, `Sure! Here it is:\n\`\`\`json\n${body}\n\`\`\``]) {
      assert.equal(parseExtraction(answer, ALL, T)[0]?.content, 'A fact.', answer);
    }
    assert.equal(stripFences('```json\n{}\n```'), '{}');
  });

  it('keeps only the types the memory extracts, and at most 5 items of each', () => {
    const many = Array.from({ length: 8 }, (_, i) => ({ content: `fact ${i}` }));
    const items = parseExtraction(JSON.stringify({ semantic: many, procedural: [{ content: 'step' }] }), ['semantic'], T);
    assert.deepEqual(items.map((i) => i.content), ['fact 0', 'fact 1', 'fact 2', 'fact 3', 'fact 4']);
  });

  it('a missing or unreadable valid_at falls back to the conversation time; invalid_at to null; bare strings are items', () => {
    const items = parseExtraction(JSON.stringify({ semantic: ['bare', { content: 'x', valid_at: 'yesterday-ish', invalid_at: 'never' }, { content: '  ' }] }), ALL, T);
    assert.deepEqual(items.map((i) => [i.content, i.valid_at, i.invalid_at, i.ordinal]), [['bare', T, null, 0], ['x', T, null, 1]]);
  });

  it('invalid JSON is an InvalidExtractionError quoting the answer', () => {
    assert.throws(() => parseExtraction('I could not find anything worth remembering.', ALL, T), (err: Error) => {
      assert.ok(err instanceof InvalidExtractionError);
      assert.match(err.message, /not valid JSON: "I could not find anything/);
      return true;
    });
    assert.throws(() => parseExtraction('{"semantic": [', ALL, T), InvalidExtractionError);
    assert.throws(() => parseExtraction('', ALL, T), /empty answer/);
  });

  it('JSON that is not the expected object is an InvalidExtractionError', () => {
    assert.throws(() => parseExtraction('[1, 2]', ALL, T), /not a JSON object/);
    assert.throws(() => parseExtraction('{"semantic": "tea"}', ALL, T), /"semantic" in the model's answer must be a list/);
  });

  it('normaliseTime: ISO with zone, date-only and space-separated as UTC, Unix seconds and milliseconds', () => {
    assert.equal(normaliseTime('2025-03-02T14:30:00Z', 0), Date.UTC(2025, 2, 2, 14, 30));
    assert.equal(normaliseTime('2025-03-02 14:30', 0), Date.UTC(2025, 2, 2, 14, 30));
    assert.equal(normaliseTime('2025-03-02', 0), Date.UTC(2025, 2, 2));
    assert.equal(normaliseTime(1_700_000_000, 0), 1_700_000_000_000);
    assert.equal(normaliseTime(1_700_000_000_123, 0), 1_700_000_000_123);
    assert.equal(normaliseTime('not a date', 42), 42);
    assert.equal(normaliseTime(null, 42), 42);
  });
});
