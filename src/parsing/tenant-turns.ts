/** Gives back a turn. Calling it again does nothing. */
export type ReleaseTurn = () => void;

interface Waiter {
  tenant: string;
  grant(release: ReleaseTurn): void;
}

/**
 * Round-robin admission to the parser processes: at most `capacity` files hold a turn at once, and when one
 * ends, the next turn goes to the waiting tenant served least recently, not to the file that asked first. A tenant with a thousand files queued therefore delays another tenant's file by at most one
 * file's parse per parser process: fairness per tenant, not per file.
 */
export class TenantTurns {
  /** Waiting files per tenant, in arrival order. */
  private readonly waiting = new Map<string, Waiter[]>();
  private held = 0;
  /** Turns held per tenant, and when each tenant last got one (a counter): the rotation's memory. */
  private readonly holding = new Map<string, number>();
  private readonly lastServed = new Map<string, number>();
  private served = 0;

  constructor(private readonly capacity: number) {}

  /** Resolves with a release once `tenant` may use a parser; rejects with the signal's reason if aborted first. */
  acquire(tenant: string, signal?: AbortSignal): Promise<ReleaseTurn> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const waiter: Waiter = {
        tenant,
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      const onAbort = () => {
        const queue = this.waiting.get(tenant);
        const at = queue?.indexOf(waiter) ?? -1;
        if (at < 0) return;
        queue!.splice(at, 1);
        if (queue!.length === 0) this.waiting.delete(tenant);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const queue = this.waiting.get(tenant);
      if (queue) queue.push(waiter);
      else this.waiting.set(tenant, [waiter]);
      this.admit();
    });
  }

  /** Files waiting for a turn, per tenant (for progress messages and tests). */
  waitingOf(tenant: string): number {
    return this.waiting.get(tenant)?.length ?? 0;
  }

  private admit(): void {
    while (this.held < this.capacity && this.waiting.size > 0) {
      const tenant = this.nextTenant();
      const queue = this.waiting.get(tenant)!;
      const waiter = queue.shift()!;
      if (queue.length === 0) this.waiting.delete(tenant);
      this.held++;
      this.holding.set(tenant, (this.holding.get(tenant) ?? 0) + 1);
      this.lastServed.set(tenant, ++this.served);
      let released = false;
      waiter.grant(() => {
        if (released) return;
        released = true;
        this.held--;
        const left = this.holding.get(tenant)! - 1;
        if (left > 0) this.holding.set(tenant, left);
        else this.holding.delete(tenant);
        // A tenant with nothing held and nothing waiting has no place in the rotation to keep.
        if (left === 0 && !this.waiting.has(tenant)) this.lastServed.delete(tenant);
        this.admit();
      });
    }
  }

  /** The waiting tenant served least recently (one never served first); ties go to the earliest to wait. */
  private nextTenant(): string {
    let best: string | undefined;
    let bestServed = Infinity;
    for (const tenant of this.waiting.keys()) {
      const served = this.lastServed.get(tenant) ?? 0;
      if (served < bestServed) {
        best = tenant;
        bestServed = served;
      }
    }
    return best!;
  }
}
