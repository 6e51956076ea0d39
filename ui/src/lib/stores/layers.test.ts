// Layers point one way: stores depend on the API client and plain modules,
// components on stores, never the reverse. This fails if any file under
// src/lib/stores/ imports (or re-exports) from src/lib/components/.

import { describe, expect, it } from "vitest";

/** Every file under src/lib/stores/ (this one aside: its examples name components), by path from here, as text. */
const sources = Object.entries(import.meta.glob<string>(["./**/*", "!./layers.test.ts"], { query: "?raw", import: "default", eager: true }));

/** The relative module specifiers a file imports or re-exports, static or dynamic. */
function specifiersOf(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(/\b(?:import|export)\b[^'"]*?\bfrom\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)|\bimport\s+["']([^"']+)["']/g)) {
    found.push((m[1] ?? m[2] ?? m[3])!);
  }
  return found.filter((s) => s.startsWith("."));
}

/** Whether `spec`, imported by the file at `path` (from the stores folder), lands under src/lib/components/. */
function reachesComponents(path: string, spec: string): boolean {
  const file = new URL(path, "file:///src/lib/stores/");
  return new URL(spec, file).pathname.startsWith("/src/lib/components/");
}

describe("the stores' layer", () => {
  it("finds the imports it checks, wherever they point", () => {
    const source = `import { a } from "../components/x";\nimport type { B } from "./y";\nexport * from '../api/client';\nconst z = await import("../components/z");`;
    expect(specifiersOf(source)).toEqual(["../components/x", "./y", "../api/client", "../components/z"]);
    expect(reachesComponents("./queue.svelte.ts", "../components/allow/allow")).toBe(true);
    expect(reachesComponents("./queue.svelte.ts", "./queue-logic")).toBe(false);
    expect(reachesComponents("./queue.svelte.ts", "../api/client")).toBe(false);
  });

  it("reads every store", () => {
    expect(sources.map(([path]) => path)).toEqual(expect.arrayContaining(["./queue.svelte.ts", "./runs.svelte.ts", "./loading.svelte.ts"]));
  });

  it("never imports from the components", () => {
    const crossing = sources.flatMap(([path, source]) =>
      specifiersOf(source)
        .filter((spec) => reachesComponents(path, spec))
        .map((spec) => `${path} imports ${spec}`),
    );
    expect(crossing).toEqual([]);
  });
});
