import assert from 'node:assert/strict';
import { checkBuiltinChat } from '../../../src/models/builtin/chat-model.js';
import { CHAT_MODEL_FILE_ENV } from '../../../src/models/builtin/locate.js';
import { SMOLLM2_135M_INSTRUCT } from '../../../src/models/builtin/spec.js';

describe('healthz: the built-in chat model check', () => {
  it('passes when the model file is where the model loads it from, without loading it', async () => {
    await checkBuiltinChat(SMOLLM2_135M_INSTRUCT, {});
  });

  it('fails naming the setting when the model file is missing', async () => {
    await assert.rejects(checkBuiltinChat(SMOLLM2_135M_INSTRUCT, { [CHAT_MODEL_FILE_ENV]: '/nonexistent/model.gguf' }), /CAIRN_CHAT_MODEL_FILE=\/nonexistent\/model\.gguf does not exist/);
  });
});
