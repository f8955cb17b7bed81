import assert from 'node:assert/strict';
import { UsageError, parseStartArgs, parseWorkerArgs } from '../../../src/cli/options.js';

describe('cairn start and cairn worker arguments', () => {
  it('start: --no-worker runs the API alone; no argument keeps the workers in-process', () => {
    assert.deepEqual(parseStartArgs([]), { noWorker: false });
    assert.deepEqual(parseStartArgs(['--no-worker']), { noWorker: true });
  });

  it('start: an unknown argument is a usage error naming it and the accepted ones', () => {
    assert.throws(() => parseStartArgs(['--no-workers']), (err: Error) => err instanceof UsageError && /unknown argument '--no-workers' \(accepted: --no-worker\)/.test(err.message));
    assert.throws(() => parseStartArgs(['now']), UsageError);
    assert.throws(() => parseStartArgs(['--no-worker=yes']), /--no-worker takes no value/);
  });

  it('worker: --queues takes a comma-separated list of roles, as one argument or after =', () => {
    assert.deepEqual(parseWorkerArgs([]), {});
    assert.deepEqual(parseWorkerArgs(['--queues', 'parse']), { roles: ['parse'] });
    assert.deepEqual(parseWorkerArgs(['--queues=agents,memory']), { roles: ['agents', 'memory'] });
    assert.deepEqual(parseWorkerArgs(['--queues', 'memory, parse,memory']), { roles: ['parse', 'memory'] }, 'canonical order, once each');
  });

  it('worker: an unknown role, a missing list or an unknown argument is a usage error', () => {
    assert.throws(() => parseWorkerArgs(['--queues', 'parse,ocr']), (err: Error) => err instanceof UsageError && err.message === "cairn worker --queues: unknown worker role 'ocr'; valid roles are parse, agents, memory");
    assert.throws(() => parseWorkerArgs(['--queues']), /--queues needs a value/);
    assert.throws(() => parseWorkerArgs(['--queues=']), /--queues needs a value/);
    assert.throws(() => parseWorkerArgs(['--queues', ',']), /no worker role given; valid roles are parse, agents, memory/);
    assert.throws(() => parseWorkerArgs(['--queue', 'parse']), /unknown argument '--queue' \(accepted: --queues\)/);
  });
});
