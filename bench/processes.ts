/**
 * Memory and CPU of the benchmark's processes, read from Linux /proc (NaN elsewhere). A component is a
 * root process and its descendants (parser processes are children of the process that parses), minus
 * the processes another component claims (the Temporal dev server is a child of Cairn's process).
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface Component {
  name: string;
  root: number;
  /** Count the root alone, not its descendants. */
  rootOnly?: boolean;
  /** Count the root's descendants, not the root (e.g. the parser and embedding processes of Cairn). */
  descendantsOnly?: boolean;
  /** Only the processes whose command line matches. */
  match?: RegExp;
}

/** The pid and every descendant of a process (children of every thread). */
export function processTree(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number) => {
    out.push(p);
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    for (const tid of tasks) {
      try {
        for (const child of readFileSync(`/proc/${p}/task/${tid}/children`, 'utf8').split(/\s+/).filter(Boolean)) visit(Number(child));
      } catch {
        // The thread ended meanwhile.
      }
    }
  };
  visit(pid);
  return out;
}

/** Resident memory of one process in bytes; 0 when it is gone, NaN without /proc. */
export function residentBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return process.platform === 'linux' ? 0 : NaN;
  }
}

/** The command line of a process ('' when gone). */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** Every process on the machine (or, with `under`, among that process's descendants) whose command line matches. */
export function findProcesses(match: RegExp, under?: number): number[] {
  let pids: number[];
  if (under !== undefined) {
    pids = processTree(under);
  } else {
    try {
      pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number);
    } catch {
      return [];
    }
  }
  return pids.filter((pid) => match.test(commandLine(pid)));
}

/** The Temporal dev server among a process's descendants. */
export function findDevServer(root: number): number | undefined {
  return processTree(root).find((pid) => pid !== root && /\bstart-dev\b/.test(commandLine(pid)));
}

/** User + system CPU seconds of a process (all its threads). */
function cpuOfProcess(pid: number): { own: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime in USER_HZ, 100 on Linux.
    return { own: (Number(f[11]) + Number(f[12])) / 100 };
  } catch {
    return { own: 0 }; // gone meanwhile
  }
}


/** Each component's processes, the ones claimed by a component listed earlier left out of the later ones. */
function assign(components: Component[]): Map<string, number[]> {
  const claimed = new Set<number>();
  const out = new Map<string, number[]>();
  // Single processes (the dev server) claim first, then the ones picked by command line, then the rest.
  const rank = (c: Component) => (c.rootOnly ? 0 : c.match ? 1 : 2);
  const ordered = [...components].sort((a, b) => rank(a) - rank(b));
  for (const c of ordered) {
    const tree = c.rootOnly ? [c.root] : processTree(c.root);
    const pids = (c.descendantsOnly ? tree.filter((p) => p !== c.root) : tree)
      .filter((p) => !claimed.has(p))
      .filter((p) => !c.match || c.match.test(commandLine(p)));
    for (const p of pids) claimed.add(p);
    out.set(c.name, pids);
  }
  return out;
}

export interface Sample {
  at: number;
  /** Bytes per component, in the order given. */
  rss: number[];
  total: number;
}

export function sampleMemory(components: Component[]): Sample {
  const pids = assign(components);
  const rss = components.map((c) => pids.get(c.name)!.reduce((s, p) => s + residentBytes(p), 0));
  return { at: performance.now(), rss, total: rss.reduce((s, x) => s + x, 0) };
}

/** CPU seconds (user + system) a process has used; 0 when gone. */
export function processCpuSeconds(pid: number): number {
  return cpuOfProcess(pid).own;
}

/** CPU seconds used so far by each component's processes, read once (for processes that outlive the measurement). */
export function componentCpuSeconds(components: Component[]): number[] {
  const pids = assign(components);
  return components.map((c) => pids.get(c.name)!.reduce((n, p) => n + cpuOfProcess(p).own, 0));
}

/**
 * Samples memory and CPU on a timer: each component's memory peak and the peak of the sum, and the CPU
 * of every process it has seen, so the CPU of a process that ended (a parser process retired when idle)
 * still counts for its component (up to one sampling period of it is lost).
 */
export class MemoryWatch {
  readonly peaks: number[];
  peakTotal = 0;
  last: Sample;
  /** CPU seconds last read of each process seen, by component. */
  private readonly cpu: Map<number, number>[];
  /** The component each process seen was counted in. */
  private readonly owners = new Map<number, number>();
  private timer?: NodeJS.Timeout;

  constructor(readonly components: Component[], everyMs = 250) {
    this.peaks = components.map(() => 0);
    this.cpu = components.map(() => new Map());
    this.last = this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
  }

  sample(): Sample {
    const pids = assign(this.components);
    const rss = this.components.map((c) => pids.get(c.name)!.reduce((n, p) => n + residentBytes(p), 0));
    const s: Sample = { at: performance.now(), rss, total: rss.reduce((n, x) => n + x, 0) };
    s.rss.forEach((b, i) => (this.peaks[i] = Math.max(this.peaks[i]!, b)));
    this.peakTotal = Math.max(this.peakTotal, s.total);
    this.last = s;
    this.components.forEach((c, i) => {
      for (const pid of pids.get(c.name)!) {
        // A process once recognised by its command line stays in that component: an exiting process has no
        // command line any more and would otherwise hand its whole CPU time to a catch-all component too.
        // The other way round (seen between fork and exec with its parent's command line) it moves.
        const previous = this.owners.get(pid);
        if (previous !== undefined && previous !== i) {
          if (this.components[previous]!.match) continue;
          this.cpu[previous]!.delete(pid);
        }
        this.owners.set(pid, i);
        const own = cpuOfProcess(pid).own;
        if (own > 0) this.cpu[i]!.set(pid, own);
      }
    });
    return s;
  }

  /** CPU seconds used so far by the processes of each component seen while watching. */
  cpuSeconds(): number[] {
    this.sample();
    return this.cpu.map((byPid) => [...byPid.values()].reduce((n, x) => n + x, 0));
  }

  /** Forgets the peaks so far (e.g. those of start-up). */
  resetPeaks(): void {
    this.peaks.fill(0);
    this.peakTotal = 0;
    this.sample();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

export const mb = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MB`;
