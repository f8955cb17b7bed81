import type { ServerResponse } from 'node:http';
import { safeJson } from '../api/envelope.js';
import type { Turn } from './events.js';
import { describeFailure } from './failure.js';
import { DONE_FRAME, errorFrame, type MessageFrames } from './message-frames.js';
import { openAIError, type OpenAIChunks } from './openai-frames.js';

/** Aborts when the client goes away before the response is complete (stops the model call). */
export function clientGone(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(new Error('the client closed the connection'));
  });
  return controller.signal;
}

/** A server-sent event stream of JSON frames (`data:{json}\n\n`, or `data: {json}` with `spaced`). */
export class SseStream {
  readonly signal: AbortSignal;
  private readonly prefix: string;

  constructor(
    private readonly res: ServerResponse,
    options: { spaced?: boolean } = {},
  ) {
    this.prefix = options.spaced ? 'data: ' : 'data:';
    this.signal = clientGone(res);
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
  }

  get closed(): boolean {
    return this.signal.aborted || this.res.writableEnded;
  }

  send(frame: unknown): void {
    if (!this.closed) this.res.write(`${this.prefix}${safeJson(frame)}\n\n`);
  }

  sendText(text: string): void {
    if (!this.closed) this.res.write(`${this.prefix}${text}\n\n`);
  }

  end(): void {
    if (!this.res.writableEnded) this.res.end();
  }
}

/** Streams a turn as conversation Message frames, an error frame if it fails, then the `data: true` sentinel. */
export async function streamMessages(res: ServerResponse, turn: Turn, frames: MessageFrames): Promise<void> {
  const sse = new SseStream(res);
  try {
    for await (const ev of turn.events(sse.signal)) for (const frame of frames.frames(ev)) sse.send(frame);
  } catch (err) {
    const { status, message } = describeFailure(err);
    sse.send(errorFrame(status, message));
  }
  sse.send(DONE_FRAME);
  sse.end();
}

/** Streams a turn as OpenAI chunks; a failure becomes an `error` event (the openai client raises it); then `[DONE]`. */
export async function streamOpenAIChunks(res: ServerResponse, turn: Turn, chunks: OpenAIChunks): Promise<void> {
  const sse = new SseStream(res, { spaced: true });
  try {
    for await (const ev of turn.events(sse.signal)) sse.send(chunks.chunk(ev));
  } catch (err) {
    const { status, message } = describeFailure(err);
    sse.send(openAIError(message, status));
  }
  sse.sendText('[DONE]');
  sse.end();
}
