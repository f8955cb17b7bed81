import { destination, pino } from 'pino';
import { HttpBackend } from '../mcp/http-backend.js';
import { serveStdio } from '../mcp/stdio.js';
import { configEnv, readSetting, type SettingsEnv } from '../config-schema.js';

/** `cairn mcp`: an MCP server on stdin/stdout in front of a running Cairn, acting as the API key's user. */
export async function runMcp(args: string[], env: SettingsEnv = configEnv()): Promise<number> {
  // stdout carries the protocol, so logs go to stderr.
  const log = pino({ base: { svc: 'cairn-mcp' }, level: readSetting(env, 'LOG_LEVEL') ?? 'info' }, destination({ dest: 2, sync: true }));
  const apiKey = option(args, '--api-key') ?? readSetting(env, 'CAIRN_API_KEY');
  const url = option(args, '--url') ?? readSetting(env, 'CAIRN_URL') ?? 'http://127.0.0.1:9380';
  if (!apiKey) {
    process.stderr.write(`cairn mcp: no API key; set CAIRN_API_KEY or pass --api-key\n`);
    return 2;
  }
  log.info({ url }, 'mcp server on stdio');
  await serveStdio(new HttpBackend(url, apiKey), (err) => log.error({ err }, 'mcp transport error'));
  return 0;
}

function option(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}
