// A preview reads as words, not markdown.

import { describe, expect, it } from "vitest";
import { plainText } from "./plain-text";

describe("plainText", () => {
  it("drops emphasis and code marks", () => {
    expect(plainText("**Plan, round 1**: run `cargo test` then _ship_")).toBe("Plan, round 1: run cargo test then ship");
  });

  it("keeps the words of links and images, not their targets", () => {
    expect(plainText("See [the diff](https://example.com/x) and ![chart](c.png)")).toBe("See the diff and chart");
  });

  it("drops heading, quote and bullet marks and joins the lines", () => {
    expect(plainText("# Deploy\n> careful\n- one\n* two\n- [x] done\n1) first")).toBe("Deploy careful one two done 1. first");
  });

  it("leaves snake_case, a lone star and arithmetic alone", () => {
    expect(plainText("set max_retries to 2 * 3 in file_name")).toBe("set max_retries to 2 * 3 in file_name");
  });

  it("removes code fences but keeps the code", () => {
    expect(plainText("```sql\nDROP TABLE x;\n```")).toBe("DROP TABLE x;");
  });
});
