import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SETTINGS, assertValidSettings, booleanSetting, settingNamed, settingProblems, unknownCairnVariables, type Setting } from '../../../src/config-schema.js';
import { loadConfig } from '../../../src/config.js';
import { configurationTable, withConfigurationTable } from '../../../src/config-table.js';

const root = path.resolve(import.meta.dirname, '..', '..', '..');
const settings = SETTINGS as readonly Setting[];

/** The variables named in the first column of the README's configuration table. */
function readmeVariables(): string[] {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Configuration\n'));
  const table = section.slice(0, section.indexOf('\n## ', 1));
  const names: string[] = [];
  for (const line of table.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const firstCell = line.split('|')[1]!;
    names.push(...[...firstCell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!));
  }
  return names;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return /\.(ts|mts|js|mjs)$/.test(e.name) ? [full] : [];
  });
}

describe('configuration schema', () => {
  it('the README configuration table is the one generated from the schema (npx tsx scripts/config-table.ts --write)', () => {
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    assert.equal(withConfigurationTable(readme, configurationTable()), readme, 'README.md differs from the schema: run npx tsx scripts/config-table.ts --write');
    const documented = readmeVariables();
    assert.deepEqual(documented, settings.map((s) => s.name), 'every declared variable, once, in the schema order');
  });

  it('declares each variable once, with a default, a meaning and the commands that read it', () => {
    const names = settings.flatMap((s) => [s.name, ...(s.aliases ?? [])]);
    assert.equal(new Set(names).size, names.length);
    for (const s of settings) {
      assert.ok(s.default && s.meaning && s.readBy.length, s.name);
      if (s.workersOnly) assert.deepEqual([...s.readBy].sort(), ['start', 'worker'], `${s.name}: workers run in both commands`);
      for (const c of s.requiredBy ?? []) assert.ok(s.readBy.includes(c), `${s.name} is required by ${c}, which does not read it`);
    }
    assert.equal(settingNamed('CAIRN_PARSE_THREADS')?.name, 'CAIRN_PARSE_PROCESSES', 'the old name is an alias');
  });

  it('leaves process.env to the schema module: no other source file reads the environment', () => {
    const offenders: string[] = [];
    for (const dir of ['src', 'activities', 'workflows']) {
      for (const file of sourceFiles(path.join(root, dir))) {
        const rel = path.relative(root, file);
        if (rel === path.join('src', 'config-schema.ts')) continue;
        const text = fs.readFileSync(file, 'utf8');
        // PATH is where the sandbox finds its interpreter: the system's, not a Cairn setting.
        const reads = [...text.matchAll(/process\.env(\.[A-Za-z_]+|\[[^\]]+\])?/g)].map((m) => m[0]).filter((m) => m !== 'process.env.PATH');
        if (reads.length) offenders.push(`${rel}: ${reads.join(', ')}`);
      }
    }
    assert.deepEqual(offenders, []);
  });

  it('passes settings down from Config: only loadConfig, the CLI and child-process launches call configEnv()', () => {
    const allowed = ['src/config-schema.ts', 'src/config.ts', 'src/cli/main.ts', 'src/cli/mcp.ts', 'src/engine/dev-server.ts', 'src/engine/orphaned-children.ts', 'src/models/builtin/host.ts'];
    const callers: string[] = [];
    for (const dir of ['src', 'activities', 'workflows']) {
      for (const file of sourceFiles(path.join(root, dir))) {
        const rel = path.relative(root, file);
        if (/\bconfigEnv\(\)/.test(fs.readFileSync(file, 'utf8')) && !allowed.includes(rel)) callers.push(rel);
      }
    }
    assert.deepEqual(callers, [], 'these modules read the environment instead of taking their settings from Config');
  });

  it('refuses values the code would misread, naming each variable and what it expects', () => {
    assert.deepEqual(settingProblems({ PORT: '80', CAIRN_EMBEDDED_WORKER: 'no', CAIRN_PARSE_TEXT_MAX_MB: '1.5' }), []);
    const problems = settingProblems({ PORT: 'eighty', TEMPORAL_UI_PORT: '70000', CAIRN_EMBEDDED_WORKER: 'nope', CAIRN_PARSE_THREADS: '-1', LOG_LEVEL: 'loud', CAIRN_WORKER_QUEUES: 'parse,ocr' });
    assert.deepEqual(problems, [
      'PORT="eighty": expected an integer from 0 to 65535',
      'LOG_LEVEL="loud": expected one of fatal, error, warn, info, debug, trace, silent',
      'TEMPORAL_UI_PORT="70000": expected an integer from 0 to 65535',
      "CAIRN_EMBEDDED_WORKER=\"nope\": expected true or false",
      "CAIRN_WORKER_QUEUES=\"parse,ocr\": unknown worker role 'ocr'; valid roles are parse, agents, memory",
      'CAIRN_PARSE_THREADS="-1": expected an integer at least 1',
    ]);
    assert.throws(() => loadConfig({ CAIRN_JSON_LIMIT: '1mb' }), /invalid configuration: CAIRN_JSON_LIMIT="1mb": expected an integer at least 1/);
    assert.doesNotThrow(() => assertValidSettings({ PORT: '', CAIRN_CHAT_PARALLEL: ' ' }), 'empty means unset');
  });

  it('refuses at startup every value it would otherwise change, naming the setting (no clamps)', () => {
    const cpus = os.availableParallelism();
    const refused: [Record<string, string>, RegExp][] = [
      [{ CAIRN_SANDBOX_TIMEOUT: '0' }, /CAIRN_SANDBOX_TIMEOUT="0": expected an integer at least 1/],
      [{ CAIRN_SANDBOX_MEMORY_MB: '8' }, /CAIRN_SANDBOX_MEMORY_MB="8": expected an integer at least 16/],
      [{ CAIRN_MAX_INFLIGHT: '0' }, /CAIRN_MAX_INFLIGHT="0": expected an integer at least 1/],
      [{ CAIRN_MAX_LONG_INFLIGHT: '0' }, /CAIRN_MAX_LONG_INFLIGHT="0": expected an integer at least 1/],
      [{ CAIRN_PARSE_PROCESSES: '0.5' }, /CAIRN_PARSE_PROCESSES="0.5": expected an integer at least 1/],
      [{ CAIRN_PARSE_MEMORY_MB: '1.5' }, /CAIRN_PARSE_MEMORY_MB="1.5": expected an integer at least 1/],
      [{ CAIRN_PARSE_ZIP_MAX_ENTRIES: '10.5' }, /CAIRN_PARSE_ZIP_MAX_ENTRIES="10.5": expected an integer at least 1/],
      [{ CAIRN_CHAT_CONTEXT: '100000' }, /CAIRN_CHAT_CONTEXT="100000": expected an integer from 1 to 8192/],
      [{ CAIRN_CHAT_THREADS: String(cpus + 1) }, new RegExp(`CAIRN_CHAT_THREADS="${cpus + 1}": expected an integer from 1 to ${cpus}`)],
      [{ CAIRN_EMBED_THREADS: '2.5' }, /CAIRN_EMBED_THREADS="2.5": expected an integer at least 1/],
      [{ CAIRN_CACHE_SIGN_BITS_MB: 'lots' }, /CAIRN_CACHE_SIGN_BITS_MB="lots": expected a positive number/],
    ];
    for (const [env, message] of refused) assert.throws(() => loadConfig(env), message, JSON.stringify(env));
  });

  it('uses every accepted value as written', () => {
    const config = loadConfig({
      CAIRN_SANDBOX_TIMEOUT: '1', CAIRN_SANDBOX_MEMORY_MB: '16', CAIRN_SANDBOX_WARM: 'false', CAIRN_MAX_INFLIGHT: '1', CAIRN_MAX_QUEUE: '0',
      CAIRN_PARSE_PROCESSES: '3', CAIRN_PARSE_TIMEOUT_SEC: '0.5', CAIRN_PARSE_TEXT_MAX_MB: '1.5', CAIRN_ENRICH_CONCURRENCY: '7',
      CAIRN_EMBED_THREADS: '1', CAIRN_EMBED_IDLE_SEC: '2.5', CAIRN_EMBED_MODEL_DIR: '/m', CAIRN_CHAT_MODEL_FILE: '/c.gguf',
      CAIRN_CHAT_CONTEXT: '2048', CAIRN_CHAT_PARALLEL: '3', CAIRN_CHAT_QUEUE: '5', CAIRN_CHAT_THREADS: '1', TEMPORAL_BIN: '/t/temporal',
      CAIRN_PRIVATE_URL_ALLOWLIST: 'a.example, 10.0.0.0/8,',
    });
    assert.equal(config.sandboxTimeoutSec, 1);
    assert.equal(config.sandboxMemoryMb, 16);
    assert.equal(config.sandboxWarm, false);
    assert.deepEqual(config.admission.short, { ...config.admission.short, maxInFlight: 1, maxQueue: 0 });
    assert.deepEqual({ ...config.parsing.ceilings }, { processes: 3, memoryMb: 1024, timeoutSec: 0.5, idleSec: 30, pageTimeoutSec: 120, waitingFiles: 200 });
    assert.equal(config.parsing.limits.textBytes, 1.5 * 2 ** 20);
    assert.equal(config.enrichConcurrency, 7);
    assert.deepEqual(config.builtinModels, { embedThreads: 1, embedIdleSec: 2.5, embedModelDir: '/m', chatModelFile: '/c.gguf', chat: { contextSize: 2048, parallel: 3, maxQueue: 5, threads: 1 } });
    assert.equal(config.temporalBin, '/t/temporal');
    assert.deepEqual(config.privateUrlAllowList, ['a.example', '10.0.0.0/8']);
  });

  it('checks each value with the parser that reads it: what startup accepts, loadConfig reads without error', () => {
    const samples = ['0', '1', '16', '1.5', '-1', '70000', 'abc', 'true', 'off', 'parse', 'info'];
    for (const s of settings) {
      for (const value of samples) {
        const env = { [s.name]: value };
        if (settingProblems(env).length) assert.throws(() => loadConfig(env), new RegExp(`${s.name}="${value}"`), `${s.name}=${value}`);
        // The storage locations are checked together, by their own parsers (blobs/location.ts, index/location.ts).
        else if (!/^(CAIRN_S3_|AWS_|CAIRN_MILVUS_|CAIRN_BLOBS$|CAIRN_INDEX$|CAIRN_DATABASE_URL$|CAIRN_JWT_SECRET$)/.test(s.name)) {
          assert.doesNotThrow(() => loadConfig(env), `${s.name}=${value}`);
        }
      }
    }
  });

  it('reads booleans as true/false, 1/0, yes/no, on/off', () => {
    assert.equal(loadConfig({ CAIRN_EMBEDDED_WORKER: '0' }).embeddedWorker, false, 'before the schema, only "false" turned it off');
    assert.equal(loadConfig({ CAIRN_EMBEDDED_WORKER: 'off' }).embeddedWorker, false);
    assert.equal(loadConfig({}).embeddedWorker, true);
    assert.equal(loadConfig({ CAIRN_ALLOW_PRIVATE_URLS: 'YES' }).allowPrivateUrls, true);
    assert.equal(booleanSetting(undefined, true), true);
    assert.equal(booleanSetting('false', true), false);
  });

  it('reads the worker roles from CAIRN_WORKER_QUEUES, all of them by default', () => {
    assert.deepEqual(loadConfig({}).workerRoles, ['parse', 'agents', 'memory']);
    assert.deepEqual(loadConfig({ CAIRN_WORKER_QUEUES: 'memory, parse' }).workerRoles, ['parse', 'memory']);
    assert.throws(() => loadConfig({ CAIRN_WORKER_QUEUES: 'agent' }), /unknown worker role 'agent'; valid roles are parse, agents, memory/);
    assert.throws(() => loadConfig({ CAIRN_WORKER_QUEUES: ',' }), /no worker role given; valid roles are parse, agents, memory/);
  });

  it('names CAIRN_ variables that nothing reads (typos), but not the test suite’s', () => {
    assert.deepEqual(unknownCairnVariables({ CAIRN_WORKER_QUEUE: 'parse', CAIRN_TEST_PROFILE: 'embedded', CAIRN_DATA_DIR: '/d', HOME: '/root' }), ['CAIRN_WORKER_QUEUE']);
  });
});
