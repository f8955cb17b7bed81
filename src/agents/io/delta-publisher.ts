import type { RunEvent, RunEvents } from '../../events/types.js';

/**
 * Sends a component's streamed text as `message` events, coalescing the deltas of each ~30 ms into one
 * event so a fast model does not write one row per token. The first text goes out at once: the caller's
 * time to first token does not wait for a batch. Think markers go out as RAGFlow sends them.
 */
export class DeltaPublisher {
  private buffer = '';
  private timer: NodeJS.Timeout | undefined;
  private thinking = false;
  private textSent = false;
  private sending: Promise<void> = Promise.resolve();

  constructor(
    private readonly events: RunEvents,
    private readonly runKey: string,
    private readonly stream: string,
    private readonly attempt: number,
    private readonly intervalMs = 30,
  ) {}

  answer(text: string): void {
    if (this.thinking) this.marker('end_to_think');
    this.push(text);
  }

  reasoning(text: string): void {
    if (!this.thinking) this.marker('start_to_think');
    this.push(text);
  }

  /** Sends another event of the run in order with the text (what was buffered goes first). */
  event(event: RunEvent): void {
    this.flush();
    this.send([event]);
  }

  private marker(kind: 'start_to_think' | 'end_to_think'): void {
    this.flush();
    this.thinking = kind === 'start_to_think';
    this.send([{ event: 'message', data: { content: '', [kind]: true }, stream: this.stream, attempt: this.attempt }]);
  }

  private push(text: string): void {
    if (!text) return;
    this.buffer += text;
    if (!this.textSent) {
      this.textSent = true;
      this.flush();
      return;
    }
    this.timer ??= setTimeout(() => this.flush(), this.intervalMs);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.buffer) return;
    const content = this.buffer;
    this.buffer = '';
    this.send([{ event: 'message', data: { content }, stream: this.stream, attempt: this.attempt, created_at: Math.floor(Date.now() / 1000) }]);
  }

  private send(events: RunEvent[]): void {
    this.sending = this.sending.then(() => this.events.publish(this.runKey, events));
  }

  /** Sends what is buffered and waits until everything is written. */
  async close(): Promise<void> {
    if (this.thinking) this.marker('end_to_think');
    this.flush();
    await this.sending;
  }
}
