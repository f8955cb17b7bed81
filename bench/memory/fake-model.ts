/**
 * The memory benchmark's model server, run in its own process so that Cairn's work does not delay it:
 * an instant OpenAI-compatible fake (no delays) whose embedding model gives `dims`-dimensional vectors
 * and whose chat model answers every extraction request with one semantic and one episodic item about each
 * turn it is asked about (valid JSON in the shape of the memory prompt's OUTPUT FORMAT; in a batch of
 * numbered turns each item carries its turn). Prints its base URL, then serves until killed.
 *
 *   node --import tsx bench/memory/fake-model.ts <dims>
 */
import { lastUserMessage, startFakeOpenAI } from '../../test/fakes/index.js';

const dims = Number(process.argv[2] ?? 384);
const fake = await startFakeOpenAI({
  dims,
  answer: (messages) => {
    // One turn, or several numbered "Turn N" (a batch): items about each, carrying their turn's number.
    const said = [...lastUserMessage(messages).matchAll(/User Input: (.*)/g)].map((m) => m[1]!.slice(0, 80));
    const turn = (i: number) => (said.length > 1 ? { turn: i + 1 } : {});
    const answer = JSON.stringify({
      semantic: said.map((s, i) => ({ ...turn(i), content: `The user cares about ${s}`, valid_at: null, invalid_at: null })),
      episodic: said.map((s, i) => ({ ...turn(i), content: `The user asked the agent about ${s}`, valid_at: '2025-03-02T14:30:00Z', invalid_at: null })),
      procedural: [],
    });
    return { answer };
  },
});
// The fake records every request; a benchmark sends thousands, so forget them as they come.
setInterval(() => fake.clear(), 1000).unref();
console.log(fake.baseUrl);
