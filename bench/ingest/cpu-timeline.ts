/**
 * The machine's and each component's CPU, second by second, while the run parses: where the cores sat idle
 * (before the model got its first texts, while it was fed, or in the tail when the last documents drain).
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import type { MemoryWatch } from '../processes.js';

export interface CpuSnapshot {
  at: number;
  machine: { busy: number; total: number };
  /** CPU seconds of each component (processes.ts), in the order of the components. */
  components: number[];
}

export function cpuSnapshot(watch: MemoryWatch): CpuSnapshot {
  let busy = 0;
  let total = 0;
  for (const c of os.cpus()) {
    const t = c.times;
    busy += t.user + t.nice + t.sys + t.irq;
    total += t.user + t.nice + t.sys + t.irq + t.idle;
  }
  return { at: performance.now(), machine: { busy, total }, components: watch.cpuSeconds() };
}

/** Wall seconds, the machine's busy fraction and each component's CPU seconds between two snapshots. */
export function cpuUse(from: CpuSnapshot, to: CpuSnapshot) {
  const wall = (to.at - from.at) / 1000;
  const machine = (to.machine.busy - from.machine.busy) / Math.max(1, to.machine.total - from.machine.total);
  return { wall, machine, components: to.components.map((x, i) => x - from.components[i]!) };
}

/** One interval of the timeline, in seconds since the first snapshot; CPU in CPU-seconds. */
export interface CpuInterval {
  from: number;
  to: number;
  /** The machine's busy CPU-s (all processes) and idle CPU-s (cores x wall - busy). */
  busy: number;
  idle: number;
  components: number[];
}

/** Snapshots every `everyMs` from start() to stop(). */
export class CpuTimeline {
  private readonly snapshots: CpuSnapshot[] = [];
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly take: () => CpuSnapshot,
    private readonly everyMs = 1000,
  ) {}

  start(first: CpuSnapshot): void {
    this.snapshots.push(first);
    this.timer = setInterval(() => this.snapshots.push(this.take()), this.everyMs);
  }

  stop(last: CpuSnapshot): void {
    clearInterval(this.timer);
    this.snapshots.push(last);
  }

  /** performance.now() of the first snapshot. */
  get origin(): number {
    return this.snapshots[0]!.at;
  }

  intervals(): CpuInterval[] {
    const cores = os.availableParallelism();
    const out: CpuInterval[] = [];
    for (let i = 1; i < this.snapshots.length; i++) {
      const a = this.snapshots[i - 1]!;
      const b = this.snapshots[i]!;
      const use = cpuUse(a, b);
      const capacity = use.wall * cores;
      out.push({
        from: (a.at - this.origin) / 1000,
        to: (b.at - this.origin) / 1000,
        busy: use.machine * capacity,
        idle: (1 - use.machine) * capacity,
        components: use.components,
      });
    }
    return out;
  }
}

/** Sums intervals into buckets of `seconds` (an interval goes to the bucket its start falls in). */
export function bucketed(intervals: CpuInterval[], seconds: number): CpuInterval[] {
  const out: CpuInterval[] = [];
  for (const x of intervals) {
    const k = Math.floor(x.from / seconds);
    const b = (out[k] ??= { from: k * seconds, to: x.to, busy: 0, idle: 0, components: x.components.map(() => 0) });
    b.to = Math.max(b.to, x.to);
    b.busy += x.busy;
    b.idle += x.idle;
    x.components.forEach((c, i) => (b.components[i]! += c));
  }
  return out.filter(Boolean);
}

/** The intervals' totals over [from, to) seconds (intervals are attributed by their midpoint). */
export function phase(intervals: CpuInterval[], from: number, to: number): { wall: number; busy: number; idle: number; components: number[] } {
  const inside = intervals.filter((x) => (x.from + x.to) / 2 >= from && (x.from + x.to) / 2 < to);
  return {
    wall: inside.reduce((n, x) => n + (x.to - x.from), 0),
    busy: inside.reduce((n, x) => n + x.busy, 0),
    idle: inside.reduce((n, x) => n + x.idle, 0),
    components: inside.reduce((sum, x) => sum.map((c, i) => c + x.components[i]!), intervals[0]?.components.map(() => 0) ?? []),
  };
}

/**
 * CPU seconds of a process's threads, summed by thread name ('main' for the main thread): which of the
 * Cairn process's threads (JavaScript, Temporal's Rust core, libuv's pool, V8's helpers) use its CPU.
 */
export function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = Number(tid) === pid ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime, stime in USER_HZ, 100 on Linux.
      out.set(name, (out.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) / 100);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

/** The CPU seconds each thread name gained between two threadCpu readings, largest first. */
export function threadCpuUse(from: Map<string, number>, to: Map<string, number>): [string, number][] {
  return [...to].map(([name, s]): [string, number] => [name, s - (from.get(name) ?? 0)]).sort((a, b) => b[1] - a[1]);
}
