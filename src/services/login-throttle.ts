/**
 * Log-in throttling: failed log-ins are counted per account (the e-mail, known or not) and per client
 * address; past a few free failures each further one closes that key for a back-off that doubles from
 * 1 s, capped. A log-in is refused while either of its keys is closed (answered 429 with Retry-After,
 * without checking the password), and a refused attempt does not count: waiting out the back-off is
 * always enough. A success clears both keys.
 *
 * The account's cap is short (a minute) and the address's long (15 minutes): one address hammering an
 * account soon waits 15 minutes between its own tries, so it can keep the account closed for at most a
 * minute at a time, and the owner, from another address, gets in when that minute has passed.
 *
 * Counters live in memory (not in the database): see docs/security.md for why.
 */

export interface ThrottlePolicy {
  /** Failures before the back-off starts. */
  freeFailures: number;
  /** The first back-off, in ms; each further failure doubles it. */
  baseMs: number;
  accountCapMs: number;
  addressCapMs: number;
  /** A key with no failure for this long is forgotten. */
  forgetAfterMs: number;
  /** Keys kept at most (the oldest are forgotten first), so a flood of made-up e-mails cannot fill memory. */
  maxKeys: number;
}

export const DEFAULT_THROTTLE: ThrottlePolicy = {
  freeFailures: 3,
  baseMs: 1000,
  accountCapMs: 60_000,
  addressCapMs: 15 * 60_000,
  forgetAfterMs: 60 * 60_000,
  maxKeys: 100_000,
};

interface Counter {
  failures: number;
  lastFailure: number;
  closedUntil: number;
}

export class LoginThrottle {
  /** Least recently failed first (Map order), for forgetting. */
  private readonly counters = new Map<string, Counter>();

  constructor(
    private readonly policy: ThrottlePolicy = DEFAULT_THROTTLE,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds until a log-in for this account from this address may be tried (0: now). */
  waitMs(account: string, address: string): number {
    const t = this.now();
    return Math.max(0, ...this.keys(account, address).map((k) => (this.live(k, t)?.closedUntil ?? 0) - t));
  }

  failed(account: string, address: string): void {
    const t = this.now();
    for (const [key, cap] of [[`account:${account}`, this.policy.accountCapMs], [`address:${address}`, this.policy.addressCapMs]] as const) {
      const c = this.live(key, t) ?? { failures: 0, lastFailure: t, closedUntil: 0 };
      c.failures++;
      c.lastFailure = t;
      const over = c.failures - this.policy.freeFailures;
      if (over > 0) c.closedUntil = t + Math.min(cap, this.policy.baseMs * 2 ** Math.min(over - 1, 30));
      this.counters.delete(key);
      this.counters.set(key, c);
    }
    while (this.counters.size > this.policy.maxKeys) this.counters.delete(this.counters.keys().next().value!);
  }

  succeeded(account: string, address: string): void {
    for (const k of this.keys(account, address)) this.counters.delete(k);
  }

  private keys(account: string, address: string): string[] {
    return [`account:${account}`, `address:${address}`];
  }

  private live(key: string, t: number): Counter | undefined {
    const c = this.counters.get(key);
    if (c && t - c.lastFailure > this.policy.forgetAfterMs && t >= c.closedUntil) {
      this.counters.delete(key);
      return undefined;
    }
    return c;
  }
}
