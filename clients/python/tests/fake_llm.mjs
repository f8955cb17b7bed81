// Starts the OpenAI-compatible fake model server of test/fakes for the pytest suite.
// Prints one JSON line {"url","base_url"} when listening, then one line {"chat":{model,messages}}
// per chat request it answers (the default script: "Echo: <last user message>"). Stops on SIGINT/SIGTERM.
import { register } from 'tsx/esm/api';

register();
const { startFakeOpenAI } = await import('../../../test/fakes/openai.ts');
const { echoAnswer } = await import('../../../test/fakes/script.ts');

const fake = await startFakeOpenAI({
  answer: (messages, model) => {
    process.stdout.write(JSON.stringify({ chat: { model, messages } }) + '\n');
    return echoAnswer(messages, model);
  },
});
process.stdout.write(JSON.stringify({ url: fake.url, base_url: fake.baseUrl }) + '\n');

const stop = async () => {
  await fake.close();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
