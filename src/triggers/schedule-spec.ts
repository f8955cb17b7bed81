/**
 * A schedule's timing as the caller gives it: a 5-field cron expression or an interval (seconds, or a
 * duration such as "1h30m"), in an IANA time zone. Checked here so a bad value is a 400 naming it, not
 * Temporal's error.
 */
import { badRequest } from '../errors.js';

export interface ScheduleTiming {
  cron?: string;
  intervalSeconds?: number;
  timezone: string;
}

const CRON_FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] },
  { name: 'day of week', min: 0, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] },
];

/** The shortest interval taken: a schedule is a turn of a model each time. */
export const MIN_INTERVAL_SECONDS = 1;

function cronValue(v: string, field: (typeof CRON_FIELDS)[number]): number {
  const named = field.names?.indexOf(v.toUpperCase()) ?? -1;
  if (named >= 0) return named + (field.name === 'month' ? 1 : 0);
  if (!/^\d+$/.test(v)) return NaN;
  return Number(v);
}

/** Checks a standard 5-field cron expression (`*`, lists, ranges, steps, month and weekday names). */
export function checkCron(expr: string): string {
  const fields = expr.trim().split(/\s+/);
  if (fields.length !== 5) throw badRequest(`Invalid cron '${expr}': expected 5 fields (minute hour day-of-month month day-of-week), got ${fields.length}`);
  fields.forEach((text, i) => {
    const field = CRON_FIELDS[i]!;
    for (const part of text.split(',')) {
      const [range, step] = part.split('/');
      const bad = () => badRequest(`Invalid cron '${expr}': the ${field.name} field '${text}' is not valid (${field.min}-${field.max})`);
      if (step !== undefined && !/^[1-9]\d*$/.test(step)) throw bad();
      if (range === '*') continue;
      const [from, to] = range!.split('-');
      const a = cronValue(from ?? '', field);
      const b = to === undefined ? a : cronValue(to, field);
      if (![a, b].every((n) => Number.isInteger(n) && n >= field.min && n <= field.max) || a > b) throw bad();
    }
  });
  return fields.join(' ');
}

const DURATION = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/** Seconds, or a duration such as "90s", "15m", "1h30m", "1d". */
export function parseInterval(value: unknown): number {
  let seconds: number;
  if (typeof value === 'number') seconds = value;
  else if (typeof value === 'string' && /^\d+$/.test(value.trim())) seconds = Number(value.trim());
  else if (typeof value === 'string' && value.trim() && DURATION.test(value.trim().toLowerCase())) {
    const [, d, h, m, s] = DURATION.exec(value.trim().toLowerCase())!;
    seconds = Number(d ?? 0) * 86400 + Number(h ?? 0) * 3600 + Number(m ?? 0) * 60 + Number(s ?? 0);
  } else throw badRequest(`Invalid interval ${JSON.stringify(value)}: give seconds (e.g. 3600) or a duration such as "90s", "15m", "1h30m", "1d"`);
  if (!Number.isInteger(seconds) || seconds < MIN_INTERVAL_SECONDS) throw badRequest(`Invalid interval ${JSON.stringify(value)}: it must be a whole number of seconds, at least ${MIN_INTERVAL_SECONDS}`);
  return seconds;
}

/** An IANA time zone name ("Europe/Berlin", "UTC"); 400 for one the runtime does not know. */
export function checkTimezone(value: unknown): string {
  if (value === undefined || value === null || value === '') return 'UTC';
  if (typeof value === 'string') {
    try {
      new Intl.DateTimeFormat('en', { timeZone: value });
      return value;
    } catch {
      // falls through to the 400
    }
  }
  throw badRequest(`Invalid timezone ${JSON.stringify(value)}: give an IANA time zone name such as "UTC" or "Europe/Berlin"`);
}

/** Exactly one of `cron` and `interval`, checked, with the time zone. */
export function scheduleTiming(input: { cron?: unknown; interval?: unknown; timezone?: unknown }): ScheduleTiming {
  const hasCron = input.cron !== undefined && input.cron !== null && input.cron !== '';
  const hasInterval = input.interval !== undefined && input.interval !== null && input.interval !== '';
  if (hasCron === hasInterval) throw badRequest('Give either `cron` (e.g. "0 9 * * MON-FRI") or `interval` (seconds, or e.g. "1h"), not both and not neither.');
  const timezone = checkTimezone(input.timezone);
  if (hasCron) {
    if (typeof input.cron !== 'string') throw badRequest('`cron` must be a string such as "0 9 * * MON-FRI"');
    return { cron: checkCron(input.cron), timezone };
  }
  return { intervalSeconds: parseInterval(input.interval), timezone };
}
