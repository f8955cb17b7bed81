import assert from 'node:assert/strict';
import { checkBuiltinChat } from '../../../src/models/builtin/chat-model.js';
import { SMOLLM2_135M_INSTRUCT } from '../../../src/models/builtin/spec.js';

describe('healthz: the built-in chat model check', () => {
  it('passes when the model file is where the model loads it from, without loading it', async () => {
    await checkBuiltinChat(SMOLLM2_135M_INSTRUCT, undefined);
  });

  it('fails naming the setting when the model file is missing', async () => {
    await assert.rejects(checkBuiltinChat(SMOLLM2_135M_INSTRUCT, '/nonexistent/model.gguf'), /CAIRN_CHAT_MODEL_FILE=\/nonexistent\/model\.gguf does not exist/);
  });
});
