import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * One full, compacting garbage collection of this thread's heap. V8 keeps the pages a busy period grew
 * (a parse run leaves the API process ~30-60 MB larger, young generation included: bench/ingest/run.ts) long after they are
 * garbage; collecting once when work has ended hands them back. `--expose-gc` is switched on just long
 * enough to fetch `gc` from a new context, so no other context gets a `gc` global.
 */
let gc: (() => void) | null | undefined;

export function fullGc(): void {
  if (gc === undefined) {
    try {
      v8.setFlagsFromString('--expose-gc');
      gc = vm.runInNewContext('gc') as () => void;
      v8.setFlagsFromString('--no-expose-gc');
    } catch {
      gc = null; // not available here: the memory comes back when V8 decides
    }
  }
  gc?.();
}
