// Starts the OpenAI-compatible fake model server of test/fakes for the pytest suite.
// Prints one JSON line {"url","base_url"} when listening, then one line {"chat":{model,messages}}
// per chat request it answers (the default script: "Echo: <last user message>"). Stops on SIGINT/SIGTERM.
//
// Per-test answers: a JSON line {"script":{"id","needle","answer"}} on stdin makes every later chat
// request whose messages contain `needle` answer `answer` (the newest matching script wins;
// {"unscript":{"id","needle"}} removes it); each command is acknowledged with {"ack": id} on stdout.
// {"sync":{"id"}} only asks for the acknowledgement: it follows every chat line of the requests answered before.
import { createInterface } from 'node:readline';
import { register } from 'tsx/esm/api';

register();
const { startFakeOpenAI } = await import('../../../test/fakes/openai.ts');
const { echoAnswer } = await import('../../../test/fakes/script.ts');

/** needle → answer, in the order they were added. */
const scripts = new Map();

const fake = await startFakeOpenAI({
  answer: (messages, model) => {
    process.stdout.write(JSON.stringify({ chat: { model, messages } }) + '\n');
    const scripted = [...scripts.entries()].reverse().find(([needle]) => messages.some((m) => m.content.includes(needle)));
    return scripted ? { answer: scripted[1] } : echoAnswer(messages, model);
  },
});
process.stdout.write(JSON.stringify({ url: fake.url, base_url: fake.baseUrl }) + '\n');

createInterface({ input: process.stdin }).on('line', (line) => {
  let command;
  try {
    command = JSON.parse(line);
  } catch {
    return;
  }
  if (command.script) {
    scripts.delete(command.script.needle);
    scripts.set(command.script.needle, String(command.script.answer));
  }
  if (command.unscript) scripts.delete(command.unscript.needle);
  const id = (command.script ?? command.unscript ?? command.sync)?.id;
  if (id !== undefined) process.stdout.write(JSON.stringify({ ack: id }) + '\n');
});

const stop = async () => {
  await fake.close();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
