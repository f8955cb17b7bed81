/**
 * The benchmark's model server, run in its own process so that Cairn's work does not delay the
 * model's timers: prints its base URL, then serves until killed.
 *
 *   node --import tsx bench/chat/fake-model.ts <ttft_ms> <token_ms> <tokens>
 */
import { startFakeOpenAI, tokensAnswer } from '../../test/fakes/index.js';

const [ttftMs, tokenDelayMs, tokens] = process.argv.slice(2).map(Number);
const fake = await startFakeOpenAI({ ttftMs, tokenDelayMs, answer: tokensAnswer(tokens!) });
console.log(fake.baseUrl);
