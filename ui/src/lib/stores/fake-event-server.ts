// The server's event stream for tests: answers `GET /api/hitl/events` (as
// the API client's fetch) with a body the test writes to as the server
// would, and keeps each request to look at its URL, headers and abort.

import type { LogEvent } from "../api/types";
import { jsonResponse } from "../test-fixtures";

/** One connection's body, written by the test. */
export class FakeStream {
  /** Whether the page aborted the request or stopped reading. */
  closed = false;
  readonly body: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  readonly #encoder = new TextEncoder();

  constructor(readonly request: Request) {
    this.body = new ReadableStream({
      start: (controller) => {
        this.#controller = controller;
      },
      cancel: () => {
        this.closed = true;
      },
    });
    request.signal.addEventListener("abort", () => {
      this.closed = true;
      this.#settle(() => this.#controller.error(new DOMException("The request was aborted", "AbortError")));
    });
  }

  get url(): URL {
    return new URL(this.request.url);
  }

  /** The server sends one event. */
  send(event: LogEvent): void {
    this.write(`id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  }

  /** Raw text on the wire. */
  write(text: string): void {
    this.#controller.enqueue(this.#encoder.encode(text));
  }

  /** The server ends the stream (a revoked token, a restart). */
  end(): void {
    this.#settle(() => this.#controller.close());
  }

  /** The connection breaks. */
  fail(): void {
    this.#settle(() => this.#controller.error(new TypeError("network error")));
  }

  #settle(action: () => void): void {
    try {
      action();
    } catch {
      // Already closed.
    }
  }
}

export class FakeEventServer {
  readonly streams: FakeStream[] = [];
  /** What the next requests are answered: 200 opens a stream, anything else is refused. */
  status = 200;

  answer(request: Request): Response {
    if (this.status !== 200) return jsonResponse(this.status, { code: "unauthorized", message: "this token is unknown or revoked" });
    const stream = new FakeStream(request);
    this.streams.push(stream);
    return new Response(stream.body, { status: 200, headers: { "Content-Type": "text/event-stream" } });
  }

  /** Opens a stream as `openEvents` would, for tests of the stream alone. */
  async connect(after: number, signal: AbortSignal): Promise<ReadableStream<Uint8Array> | null> {
    const response = this.answer(new Request(`http://gatehouse.test/api/hitl/events?after=${after}`, { signal }));
    return response.ok ? response.body : null;
  }

  latest(): FakeStream {
    const last = this.streams[this.streams.length - 1];
    if (!last) throw new Error("no event stream was opened");
    return last;
  }
}
