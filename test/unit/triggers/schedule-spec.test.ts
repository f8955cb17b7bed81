import assert from 'node:assert/strict';
import { checkCron, parseInterval, scheduleTiming } from '../../../src/triggers/schedule-spec.js';
import { ApiError } from '../../../src/errors.js';

const refused = (fn: () => unknown, pattern: RegExp) => assert.throws(fn, (err: unknown) => err instanceof ApiError && err.status === 400 && pattern.test(err.message));

describe('schedule timing', () => {
  it('takes 5-field cron expressions with lists, ranges, steps and names', () => {
    for (const expr of ['* * * * *', '*/15 9-17 * * MON-FRI', '0 0 1,15 JAN,jul *', '5 4 * * 0', '0 12 * * 7']) assert.equal(checkCron(expr), expr);
  });

  it('refuses cron fields out of range, reversed ranges and wrong field counts, naming the field', () => {
    refused(() => checkCron('60 * * * *'), /minute field '60'/);
    refused(() => checkCron('* 24 * * *'), /hour field '24'/);
    refused(() => checkCron('* * 0 * *'), /day of month field '0'/);
    refused(() => checkCron('* * * 5-2 *'), /month field '5-2'/);
    refused(() => checkCron('* * * * FUNDAY'), /day of week field 'FUNDAY'/);
    refused(() => checkCron('*/0 * * * *'), /minute field/);
    refused(() => checkCron('* * * * * *'), /expected 5 fields/);
  });

  it('reads intervals as seconds or durations', () => {
    assert.equal(parseInterval(90), 90);
    assert.equal(parseInterval('3600'), 3600);
    assert.equal(parseInterval('1h30m'), 5400);
    assert.equal(parseInterval('1d'), 86400);
    assert.equal(parseInterval('45s'), 45);
    refused(() => parseInterval('1.5h'), /Invalid interval/);
    refused(() => parseInterval(0.5), /whole number of seconds, at least 1/);
  });

  it('needs exactly one of cron and interval, and a known IANA time zone (UTC by default)', () => {
    assert.deepEqual(scheduleTiming({ interval: '1m' }), { intervalSeconds: 60, timezone: 'UTC' });
    assert.deepEqual(scheduleTiming({ cron: '0 9 * * *', timezone: 'America/New_York' }), { cron: '0 9 * * *', timezone: 'America/New_York' });
    refused(() => scheduleTiming({}), /either `cron`/);
    refused(() => scheduleTiming({ cron: '* * * * *', interval: 5 }), /not both/);
    refused(() => scheduleTiming({ interval: 5, timezone: 'Europe/Atlantis' }), /Invalid timezone "Europe\/Atlantis"/);
  });
});
