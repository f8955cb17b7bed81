import { EventEmitter } from 'node:events';

/**
 * Wakes the readers of a run in this process when this process published to it; readers in other
 * processes find the events when their wait times out and they read the log again.
 */
export class LocalWakeups {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  notify(runKey: string): void {
    this.emitter.emit(runKey);
  }

  wait(runKey: string, timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.emitter.off(runKey, done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.emitter.once(runKey, done);
    });
  }
}
