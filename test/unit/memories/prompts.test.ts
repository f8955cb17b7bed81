import assert from 'node:assert/strict';
import {
  OUTPUT_FORMAT, OUTPUT_REQUIREMENTS, assembleSystemPrompt, buildUserPrompt, fixedPartProblem, rawContent,
} from '../../../src/memories/prompts.js';

describe('memories: prompt assembly', () => {
  it('the system prompt has a section for each selected extracted type and none for the others, then the fixed parts', () => {
    const prompt = assembleSystemPrompt(['raw', 'semantic', 'procedural']);
    assert.match(prompt, /### SEMANTIC MEMORY/);
    assert.match(prompt, /### PROCEDURAL MEMORY/);
    assert.doesNotMatch(prompt, /### EPISODIC MEMORY/);
    assert.match(prompt, /Extract only these types: semantic, procedural\./);
    const requirements = prompt.indexOf('## OUTPUT REQUIREMENTS');
    const format = prompt.indexOf('## OUTPUT FORMAT');
    assert.ok(prompt.indexOf('### PROCEDURAL MEMORY') < requirements && requirements < format, 'type sections, then requirements, then format');
    assert.ok(prompt.endsWith(OUTPUT_FORMAT));
  });

  it('the fixed parts ask for JSON with semantic/episodic/procedural lists of {content, valid_at, invalid_at}, ISO-8601 times and at most 5 items per type', () => {
    assert.match(OUTPUT_REQUIREMENTS, /JSON object/);
    assert.match(OUTPUT_REQUIREMENTS, /ISO 8601/);
    assert.match(OUTPUT_REQUIREMENTS, /at most 5 items per type/);
    const example = JSON.parse(OUTPUT_FORMAT.slice(OUTPUT_FORMAT.indexOf('{')));
    assert.deepEqual(Object.keys(example), ['semantic', 'episodic', 'procedural']);
    assert.deepEqual(Object.keys(example.semantic[0]), ['content', 'valid_at', 'invalid_at']);
  });

  it('a raw-only memory still gets the fixed parts, and asks for nothing', () => {
    const prompt = assembleSystemPrompt(['raw']);
    assert.match(prompt, /raw messages only/);
    assert.equal(fixedPartProblem(prompt), undefined);
  });

  it('the fixed parts are identical whatever the types, so every generated prompt passes the check', () => {
    for (const types of [['raw'], ['semantic'], ['episodic', 'procedural'], ['raw', 'semantic', 'episodic', 'procedural']] as const) {
      assert.equal(fixedPartProblem(assembleSystemPrompt(types)), undefined, types.join(','));
    }
  });

  it('an edit outside the fixed parts is accepted (other sections rewritten or added, CRLF line ends, trailing spaces)', () => {
    const prompt = assembleSystemPrompt(['semantic']);
    const edited = prompt.replace(/^You are the memory[^\n]*/, 'You remember only facts about cooking.');
    assert.equal(fixedPartProblem(edited), undefined);
    assert.equal(fixedPartProblem(`${edited}\n\n## NOTES\nBe brief.`), undefined, 'a new section after the format');
    assert.equal(fixedPartProblem(edited.replaceAll('\n', '  \r\n')), undefined);
  });

  it('an edit that changes OUTPUT REQUIREMENTS or OUTPUT FORMAT is named in the problem', () => {
    const prompt = assembleSystemPrompt(['semantic']);
    assert.match(fixedPartProblem(prompt.replace('at most 5 items', 'at most 50 items'))!, /OUTPUT REQUIREMENTS part was changed/);
    assert.match(fixedPartProblem(prompt.replace('"procedural": [', '"rules": ['))!, /OUTPUT FORMAT part was changed/);
    assert.match(fixedPartProblem(prompt.replace(OUTPUT_FORMAT, ''))!, /OUTPUT FORMAT part is missing/);
    assert.match(fixedPartProblem('Remember everything.')!, /OUTPUT REQUIREMENTS part is missing/);
    assert.match(fixedPartProblem(`${prompt}\nAlso answer in YAML.`)!, /OUTPUT FORMAT part was changed/, 'text appended to the format part changes it');
  });

  it('the user prompt carries the conversation, its time and the current time in ISO 8601; a custom user prompt comes first', () => {
    const t = Date.UTC(2025, 2, 2, 14, 30, 0);
    const def = buildUserPrompt({ conversation: rawContent('hi', 'hello'), conversationTime: t, now: t + 60_000 });
    assert.match(def, /Conversation:\nUser Input: hi\nAgent Response: hello/);
    assert.match(def, /Conversation Time: 2025-03-02T14:30:00Z\nCurrent Time: 2025-03-02T14:31:00Z/);
    const custom = buildUserPrompt({ userPrompt: 'Focus on food.', conversation: 'x', conversationTime: t, now: t });
    assert.ok(custom.startsWith('Focus on food.\n\nConversation:\nx'));
  });
});
