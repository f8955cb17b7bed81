import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { SETTINGS, assertValidSettings, booleanSetting, settingNamed, settingProblems, unknownCairnVariables, type Setting } from '../../../src/config-schema.js';
import { loadConfig } from '../../../src/config.js';

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
  it('declares every variable of the README configuration table, and the table lists every declared variable', () => {
    const documented = readmeVariables();
    assert.ok(documented.length > 40, `found only ${documented.length} variables in the README table`);
    const declared = settings.map((s) => s.name);
    assert.deepEqual(documented.filter((n) => !declared.includes(n)), [], 'in the README table but not in src/config-schema.ts');
    assert.deepEqual(declared.filter((n) => !documented.includes(n)), [], 'in src/config-schema.ts but not in the README table');
    assert.equal(new Set(documented).size, documented.length, 'a variable appears twice in the README table');
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

  it('refuses values the code would misread, naming each variable and what it expects', () => {
    assert.deepEqual(settingProblems({ PORT: '80', CAIRN_EMBEDDED_WORKER: 'no', CAIRN_PARSE_MEMORY_MB: '1.5' }), []);
    const problems = settingProblems({ PORT: 'eighty', TEMPORAL_UI_PORT: '70000', CAIRN_EMBEDDED_WORKER: 'nope', CAIRN_PARSE_THREADS: '-1', LOG_LEVEL: 'loud', CAIRN_WORKER_QUEUES: 'parse,ocr' });
    assert.deepEqual(problems, [
      'PORT="eighty": expected an integer from 0 to 65535',
      'LOG_LEVEL="loud": expected one of fatal, error, warn, info, debug, trace, silent',
      'TEMPORAL_UI_PORT="70000": expected an integer from 0 to 65535',
      "CAIRN_EMBEDDED_WORKER=\"nope\": expected true or false",
      "CAIRN_WORKER_QUEUES=\"parse,ocr\": unknown worker role 'ocr'; valid roles are parse, agents, memory",
      'CAIRN_PARSE_THREADS="-1": expected a positive number',
    ]);
    assert.throws(() => loadConfig({ CAIRN_JSON_LIMIT: '1mb' }), /invalid configuration: CAIRN_JSON_LIMIT="1mb": expected an integer at least 1/);
    assert.doesNotThrow(() => assertValidSettings({ PORT: '', CAIRN_CHAT_PARALLEL: ' ' }), 'empty means unset');
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
