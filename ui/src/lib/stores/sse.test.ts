import { describe, expect, it } from "vitest";
import { SseParser, type SseMessage } from "./sse";

function parse(...pieces: string[]): SseMessage[] {
  const messages: SseMessage[] = [];
  const parser = new SseParser((m) => messages.push(m));
  for (const piece of pieces) parser.push(piece);
  return messages;
}

describe("the Server-Sent Events parser", () => {
  it("reads id, event and data lines into one message per blank line", () => {
    expect(parse("id: 7\nevent: gate_opened\ndata: {\"seq\":7}\n\n")).toEqual([
      { id: "7", event: "gate_opened", data: '{"seq":7}' },
    ]);
  });

  it("joins data lines, keeps the last id, defaults the type and skips comments and empty messages", () => {
    const messages = parse(": keep-alive\n\n", "id: 3\ndata: a\ndata:b\n\n", "event: x\n\n", "data: c\n\n");
    expect(messages).toEqual([
      { id: "3", event: "message", data: "a\nb" },
      { id: "3", event: "message", data: "c" },
    ]);
  });

  it("accepts CRLF and CR line ends, split anywhere between pieces", () => {
    const text = "id: 1\r\nevent: a\r\ndata: one\r\n\r\nid: 2\revent: b\rdata: two\r\r";
    const whole = parse(text);
    expect(whole.map((m) => [m.id, m.event, m.data])).toEqual([["1", "a", "one"], ["2", "b", "two"]]);
    for (let cut = 1; cut < text.length; cut++) {
      expect(parse(text.slice(0, cut), text.slice(cut)), `cut at ${cut}`).toEqual(whole);
    }
  });

  it("waits for the blank line before dispatching", () => {
    expect(parse("id: 1\nevent: a\ndata: half")).toEqual([]);
  });
});
