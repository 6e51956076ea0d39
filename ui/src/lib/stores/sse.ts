// Server-Sent Events as the HTML standard reads them: text in, messages
// out. The page reads its event stream with fetch (so the token travels in
// the Authorization header, never in a URL) and hands the decoded text here.

/** One message: its `id:` (the last one seen, as the standard keeps it), `event:` and `data:` lines. */
export interface SseMessage {
  id: string | null;
  event: string;
  data: string;
}

/** Parses a stream fed in pieces; a line or a message may span pieces. */
export class SseParser {
  readonly #onMessage: (message: SseMessage) => void;
  #pending = "";
  #afterCr = false;
  #event = "";
  #data: string[] = [];
  #id: string | null = null;

  constructor(onMessage: (message: SseMessage) => void) {
    this.#onMessage = onMessage;
  }

  /** The next piece of the stream's text. */
  push(text: string): void {
    if (text === "") return;
    // A `\r` that ended the last piece may have been the first half of `\r\n`.
    const piece = this.#afterCr && text.startsWith("\n") ? text.slice(1) : text;
    this.#afterCr = false;
    const buffer = this.#pending + piece;
    let start = 0;
    for (let i = 0; i < buffer.length; i++) {
      const c = buffer[i];
      if (c !== "\n" && c !== "\r") continue;
      this.#line(buffer.slice(start, i));
      if (c === "\r" && i + 1 === buffer.length) this.#afterCr = true;
      else if (c === "\r" && buffer[i + 1] === "\n") i++;
      start = i + 1;
    }
    this.#pending = buffer.slice(start);
  }

  #line(line: string): void {
    if (line === "") return this.#dispatch();
    if (line.startsWith(":")) return; // a comment: the server's keep-alive
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.#event = value;
    else if (field === "data") this.#data.push(value);
    else if (field === "id" && !value.includes("\0")) this.#id = value;
  }

  #dispatch(): void {
    const data = this.#data;
    const event = this.#event || "message";
    this.#data = [];
    this.#event = "";
    if (data.length === 0) return;
    this.#onMessage({ id: this.#id, event, data: data.join("\n") });
  }
}
