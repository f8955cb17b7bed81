import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { SETTINGS, settingNamed, type Command, type Setting } from '../../../src/config-schema.js';
import { loadConfig } from '../../../src/config.js';
import { parseDatabaseUrl } from '../../../src/store/db.js';
import { parseStartArgs, parseWorkerArgs } from '../../../src/cli/options.js';
import { WORKER_ROLES, type WorkerRole } from '../../../src/engine/task-queues.js';

/**
 * docker-compose.yml cannot run here (no Docker engine), so this is its `docker compose config` and more:
 * every Cairn service against the configuration schema and the CLI, and the topology README documents.
 */
const root = path.resolve(import.meta.dirname, '..', '..', '..');

interface Service {
  image?: string;
  command?: string[] | string;
  entrypoint?: string[] | string;
  environment?: Record<string, string | number | boolean | null> | string[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  deploy?: { replicas?: number };
  ports?: string[];
  configs?: { source: string; target: string }[];
}

interface Compose {
  services: Record<string, Service>;
  configs?: Record<string, { content?: string; file?: string }>;
  volumes?: Record<string, unknown>;
}

const compose = yaml.load(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8')) as Compose;
const services = compose.services;

/** A Cairn process: which command, with which arguments and environment. */
interface CairnService {
  name: string;
  command: Exclude<Command, 'mcp'>;
  args: string[];
  env: Record<string, string>;
  replicas: number;
}

function environmentOf(service: Service): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) return Object.fromEntries(env.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === null ? '' : String(v)]));
}

function argv(value: string[] | string | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : value.split(/\s+/);
}

const cairnServices: CairnService[] = Object.entries(services)
  .filter(([, s]) => s.image?.startsWith('cairn:'))
  .map(([name, s]) => {
    const [node, bin, command, ...args] = argv(s.command);
    assert.deepEqual([node, bin], ['node', 'bin/cairn.js'], `${name} runs the cairn CLI`);
    assert.ok(command === 'start' || command === 'worker', `${name}: '${command}' is not a cairn server command`);
    return { name, command, args, env: environmentOf(s), replicas: s.deploy?.replicas ?? 1 };
  });

const byCommand = (command: string) => cairnServices.filter((s) => s.command === command);

function dependsOn(service: Service): string[] {
  const d = service.depends_on ?? [];
  return Array.isArray(d) ? d : Object.keys(d);
}

/** Every service started before `name`: its dependencies and theirs. */
function startedBefore(name: string, seen = new Set<string>()): Set<string> {
  for (const d of dependsOn(services[name] ?? {})) {
    if (seen.has(d)) continue;
    seen.add(d);
    startedBefore(d, seen);
  }
  return seen;
}

/** The host of `host:port` or of a URL. */
function hostOf(address: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(address) ? new URL(address).hostname : address.split(':')[0]!;
}

/** The roles a worker service polls: --queues, else CAIRN_WORKER_QUEUES, else all (as the CLI decides). */
function rolesOf(service: CairnService): WorkerRole[] {
  return parseWorkerArgs(service.args).roles ?? loadConfig(service.env).workerRoles;
}

/** Rows of the README table that follows "**Topology**" in "Running at scale". */
function documentedTopology(): { service: string; command: string; replicas: number }[] {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Running at scale'));
  const table = section.slice(section.indexOf('**Topology**'));
  const rows: { service: string; command: string; replicas: number }[] = [];
  for (const line of table.split('\n').slice(1)) {
    if (!line.startsWith('|')) {
      if (rows.length) break;
      continue;
    }
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    if (!cells[0]!.startsWith('`')) continue;
    rows.push({ service: cells[0]!.replace(/`/g, ''), command: cells[1]!.replace(/`/g, ''), replicas: Number(cells[2]) });
  }
  return rows;
}

describe('docker-compose.yml', () => {
  it('runs API replicas with `cairn start --no-worker` and workers with `cairn worker`, with arguments the CLI accepts', () => {
    assert.ok(fs.existsSync(path.join(root, 'bin', 'cairn.js')));
    assert.ok(byCommand('start').length >= 1 && byCommand('worker').length >= 1);
    for (const s of byCommand('start')) assert.equal(parseStartArgs(s.args).noWorker, true, `${s.name}: an API replica runs no worker`);
    for (const s of byCommand('worker')) assert.doesNotThrow(() => parseWorkerArgs(s.args), s.name);
  });

  it('sets only variables of the configuration schema, each read by the command that runs it', () => {
    for (const s of cairnServices) {
      const apiOnly = s.command === 'start' && parseStartArgs(s.args).noWorker;
      for (const name of Object.keys(s.env)) {
        const setting = settingNamed(name);
        assert.ok(setting, `${s.name}: ${name} is not a Cairn setting (src/config-schema.ts)`);
        assert.ok(setting.readBy.includes(s.command), `${s.name}: cairn ${s.command} does not read ${name}`);
        assert.ok(!(apiOnly && setting.workersOnly), `${s.name}: ${name} is read only by workers, and this API runs none`);
      }
      for (const setting of SETTINGS as readonly Setting[]) {
        if (setting.requiredBy?.includes(s.command)) assert.ok(s.env[setting.name], `${s.name}: cairn ${s.command} needs ${setting.name}`);
      }
    }
  });

  it('gives every variable a value the code accepts, on the scale-out profile', () => {
    for (const s of cairnServices) {
      const config = loadConfig(s.env);
      assert.equal(parseDatabaseUrl(config.databaseUrl).dialect, 'postgres', `${s.name}: metadata on PostgreSQL`);
      assert.equal(config.blobs.kind, 's3', `${s.name}: files on S3`);
      assert.match(s.env.CAIRN_INDEX ?? '', /^milvus:\/\/[a-z0-9-]+:\d+(\/\w+)?$/, `${s.name}: chunks on Milvus (milvus://host:port[/db])`);
      // An API replica without TEMPORAL_ADDRESS would start a Temporal dev server of its own.
      assert.ok(config.temporalAddress, `${s.name}: TEMPORAL_ADDRESS`);
      if (s.command === 'start') assert.match(config.host, /^0\.0\.0\.0$|^::$/, `${s.name} listens beyond loopback`);
    }
  });

  it('points every Cairn process at the same backends, each a service of this file', () => {
    const shared = (SETTINGS as readonly Setting[]).filter((setting) => setting.shared);
    for (const setting of shared) {
      const values = new Set(cairnServices.filter((s) => setting.readBy.includes(s.command)).map((s) => s.env[setting.name]));
      assert.equal(values.size, 1, `${setting.name} differs between Cairn services: ${[...values].join(' / ')}`);
    }
    const env = cairnServices[0]!.env;
    const backends = { TEMPORAL_ADDRESS: 'temporal', CAIRN_DATABASE_URL: 'postgres', CAIRN_INDEX: 'milvus', CAIRN_S3_ENDPOINT: 's3' } as const;
    for (const [name, service] of Object.entries(backends)) {
      const host = hostOf(env[name]!);
      assert.equal(host, service, `${name} names the ${service} service`);
      for (const s of cairnServices) assert.ok(startedBefore(s.name).has(host), `${s.name} waits for ${host}`);
    }
  });

  it('names only existing services in depends_on', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const dependency of dependsOn(service)) assert.ok(services[dependency], `${name} depends on '${dependency}', which is not a service`);
    }
  });

  it('runs several API replicas behind one published port', () => {
    const api = byCommand('start');
    assert.equal(api.length, 1);
    assert.ok(api[0]!.replicas >= 2, 'N API replicas');
    assert.equal(services[api[0]!.name]!.ports, undefined, 'replicas publish no port of their own (they would clash)');
    const published = Object.entries(services).filter(([, s]) => (s.ports ?? []).some((p) => String(p).startsWith('9380:')));
    assert.deepEqual(published.map(([name]) => name), ['proxy']);
    const proxy = services.proxy!;
    assert.ok(dependsOn(proxy).includes(api[0]!.name));
    const conf = compose.configs?.[proxy.configs?.[0]?.source ?? '']?.content ?? '';
    assert.match(conf, new RegExp(`server ${api[0]!.name}:${api[0]!.env.PORT}\\b`), 'nginx forwards to the API service on its PORT');
    assert.match(conf, /proxy_buffering off;/, 'streams are not buffered');
    assert.doesNotMatch(conf.replace(/\$\$/g, ''), /\$/, 'a lone $ would be interpolated by compose');
  });

  it('runs workers for every queue role, as README "Running at scale" documents', () => {
    const covered = new Set(byCommand('worker').flatMap(rolesOf));
    assert.deepEqual(WORKER_ROLES.filter((r) => !covered.has(r)), [], 'every role has a worker');
    const documented = documentedTopology();
    assert.ok(documented.length >= 5, 'the README table was found');
    for (const row of documented) {
      const service = services[row.service];
      assert.ok(service, `README lists ${row.service}, which docker-compose.yml lacks`);
      assert.equal(service.deploy?.replicas ?? 1, row.replicas, `${row.service} replicas`);
      const cairn = cairnServices.find((s) => s.name === row.service);
      if (cairn) assert.equal(row.command, ['cairn', cairn.command, ...cairn.args].join(' '), `${row.service} command`);
    }
    for (const s of cairnServices) assert.ok(documented.some((row) => row.service === s.name), `README does not list ${s.name}`);
  });

  it('runs Temporal on PostgreSQL with its UI, and Milvus standalone with its etcd and MinIO', () => {
    const temporal = environmentOf(services.temporal!);
    assert.equal(temporal.DB, 'postgres12');
    assert.match(services[temporal.POSTGRES_SEEDS!]?.image ?? '', /^postgres:/);
    assert.ok(dependsOn(services.temporal!).includes(temporal.POSTGRES_SEEDS!));
    assert.equal(environmentOf(services['temporal-ui']!).TEMPORAL_ADDRESS, cairnServices[0]!.env.TEMPORAL_ADDRESS);
    assert.match(services['temporal-ui']!.image!, /^temporalio\/ui:/);

    const milvus = services.milvus!;
    assert.deepEqual(argv(milvus.command), ['milvus', 'run', 'standalone']);
    const env = environmentOf(milvus);
    assert.match(services[hostOf(env.ETCD_ENDPOINTS!)]?.image ?? '', /etcd/);
    assert.match(services[hostOf(env.MINIO_ADDRESS!)]?.image ?? '', /^minio\/minio:/);
    assert.deepEqual(dependsOn(milvus).sort(), [hostOf(env.ETCD_ENDPOINTS!), hostOf(env.MINIO_ADDRESS!)].sort());
    assert.match(milvus.image!, /^milvusdb\/milvus:v2\.([5-9]|\d\d)\./, 'BM25 full-text search needs Milvus 2.5 or later');
  });

  it('pins every third-party image to a version', () => {
    for (const [name, service] of Object.entries(services)) {
      assert.ok(service.image, `${name} has an image`);
      if (service.image.startsWith('cairn:')) continue;
      assert.match(service.image, /:[^:]+$/, `${name}: ${service.image} has no tag`);
      assert.doesNotMatch(service.image, /:latest$/, `${name}: ${service.image} is not pinned`);
    }
  });
});
