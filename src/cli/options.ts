import { parseWorkerRoles, type WorkerRole } from '../engine/task-queues.js';

/** A command line `cairn` cannot run: printed with the usage, exit status 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Splits `--name value` / `--name=value` / `--flag` arguments; anything not in `known` is a usage error. */
function readFlags(command: string, args: string[], known: Record<string, 'flag' | 'value'>): Map<string, string | true> {
  const flags = new Map<string, string | true>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const kind = known[name];
    if (!kind) {
      const accepted = Object.keys(known);
      throw new UsageError(`cairn ${command}: unknown argument '${arg}'${accepted.length ? ` (accepted: ${accepted.join(', ')})` : ' (it takes none)'}`);
    }
    if (kind === 'flag') {
      if (eq > 0) throw new UsageError(`cairn ${command}: ${name} takes no value`);
      flags.set(name, true);
      continue;
    }
    const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || value === '') throw new UsageError(`cairn ${command}: ${name} needs a value`);
    flags.set(name, value);
  }
  return flags;
}

/** `cairn start [--no-worker]`: `--no-worker` runs the HTTP API alone (an API replica). */
export function parseStartArgs(args: string[]): { noWorker: boolean } {
  const flags = readFlags('start', args, { '--no-worker': 'flag' });
  return { noWorker: flags.has('--no-worker') };
}

/** `cairn worker [--queues parse,agents,memory]`: the roles to poll; unset = CAIRN_WORKER_QUEUES (default all). */
export function parseWorkerArgs(args: string[]): { roles?: WorkerRole[] } {
  const queues = readFlags('worker', args, { '--queues': 'value' }).get('--queues');
  if (typeof queues !== 'string') return {};
  try {
    return { roles: parseWorkerRoles(queues, 'cairn worker --queues') };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
