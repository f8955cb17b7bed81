import assert from 'node:assert/strict';
import { ApiError } from '../../../src/errors.js';
import { defaultPromptConfig } from '../../../src/chat/config.js';
import { checkPromptConfig, formatKnowledge, promptVariables, renderSystemPrompt, variableValues } from '../../../src/chat/prompt.js';

function rejects400(fn: () => unknown, pattern: RegExp) {
  assert.throws(fn, (err: unknown) => err instanceof ApiError && err.status === 400 && pattern.test(err.message));
}

describe('chat prompt variables', () => {
  describe('promptVariables', () => {
    it('finds {name} references once each, in order, and ignores other braces', () => {
      assert.deepEqual(promptVariables('Hi {user}, see {knowledge}. {user} again; JSON {"a": 1} and { spaced } and {9lives}'), ['user', 'knowledge']);
    });
  });

  describe('checkPromptConfig (spec rule 5: variables and system prompt must agree)', () => {
    it('accepts the default configuration', () => {
      checkPromptConfig(defaultPromptConfig());
    });

    it('accepts a prompt without variables and an empty parameter list (a chat without datasets)', () => {
      checkPromptConfig({ system: 'You are a pirate.', parameters: [] });
    });

    it('rejects a parameter that is not in the system prompt, naming it', () => {
      rejects400(() => checkPromptConfig({ system: 'Use {knowledge}.', parameters: [{ key: 'knowledge', optional: true }, { key: 'tone', optional: false }] }), /'tone'.*not in prompt_config\.system/);
    });

    it('rejects {knowledge} left in the parameters after it was removed from the prompt', () => {
      rejects400(() => checkPromptConfig({ system: 'No knowledge here.', parameters: [{ key: 'knowledge', optional: true }] }), /'knowledge'/);
    });

    it('rejects a variable of the system prompt that is not in the parameters, naming it', () => {
      rejects400(() => checkPromptConfig({ system: 'Answer in {language}: {knowledge}', parameters: [{ key: 'knowledge', optional: true }] }), /\{language\}.*not in prompt_config\.parameters/);
    });

    it('rejects duplicate keys', () => {
      rejects400(() => checkPromptConfig({ system: '{a}', parameters: [{ key: 'a', optional: true }, { key: 'a', optional: false }] }), /duplicate key: a/);
    });

    it('rejects names that are not identifiers and names the conversation API reserves', () => {
      rejects400(() => checkPromptConfig({ system: '{a b}', parameters: [{ key: 'a b', optional: true }] }), /not a valid variable name/);
      rejects400(() => checkPromptConfig({ system: '{stream}', parameters: [{ key: 'stream', optional: true }] }), /reserved/);
    });
  });

  describe('variableValues (rules 3 and 4)', () => {
    const parameters = [
      { key: 'knowledge', optional: true },
      { key: 'language', optional: false },
      { key: 'tone', optional: true },
    ];

    it('takes values from the extra keys; a missing optional one is empty; knowledge is never taken from the caller', () => {
      assert.deepEqual(variableValues(parameters, { language: 'French', knowledge: 'forged', stream: true }), { language: 'French', tone: '' });
    });

    it('rejects a missing mandatory variable with a 400 naming it', () => {
      rejects400(() => variableValues(parameters, { tone: 'dry' }), /'language'/);
      rejects400(() => variableValues(parameters, { language: null }), /'language'/);
    });

    it('turns numbers and booleans into text and rejects objects', () => {
      assert.deepEqual(variableValues([{ key: 'n', optional: false }], { n: 3 }), { n: '3' });
      rejects400(() => variableValues([{ key: 'n', optional: false }], { n: { a: 1 } }), /'n' must be a string/);
    });
  });

  describe('renderSystemPrompt', () => {
    it('fills knowledge and variables in one pass (values are not expanded again) and keeps other braces', () => {
      const out = renderSystemPrompt('Speak {language}. {knowledge} {"json": true} {unknown}', { language: '{knowledge}' }, 'K');
      assert.equal(out, 'Speak {knowledge}. K {"json": true} {unknown}');
    });

    it('fills {knowledge} with nothing when retrieval found nothing', () => {
      assert.equal(renderSystemPrompt('Base:\n{knowledge}\nEnd', {}, ''), 'Base:\n\nEnd');
    });
  });

  describe('formatKnowledge', () => {
    it('numbers the chunks as the citation markers refer to them', () => {
      assert.equal(
        formatKnowledge([
          { document_name: 'a.txt', content: 'Alpha.' },
          { document_name: 'b.md', content: 'Beta.' },
        ]),
        'ID: 0\n├── Title: a.txt\n└── Content:\nAlpha.\n\nID: 1\n├── Title: b.md\n└── Content:\nBeta.',
      );
    });
  });
});
