// Refreshes ui/openapi.json from the server itself: `gatehouse openapi`
// prints the document `GET /api/hitl/openapi.json` serves, generated from
// the handlers' annotations. With --check it writes nothing and fails when
// ui/openapi.json is not exactly what it would write (the test command runs
// that, so a server change without a refreshed document is caught).
//
// Usage: node scripts/fetch-openapi.mjs [--check] [path/to/gatehouse]
//   (default: $GATEHOUSE_BIN, else ../target/debug/gatehouse; build it with
//   `cargo build -p gatehouse-cli`). Then run `npm run gen:api`.

import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const check = args.includes("--check");
const binary =
  args.find((a) => a !== "--check") ?? process.env.GATEHOUSE_BIN ?? join(root, "../target/debug/gatehouse");
const target = join(root, "openapi.json");

let stdout;
try {
  ({ stdout } = await promisify(execFile)(binary, ["openapi"], { maxBuffer: 64 * 1024 * 1024 }));
} catch (e) {
  console.error(`fetch:api: cannot run \`${binary} openapi\` (build it with \`cargo build -p gatehouse-cli\`): ${e instanceof Error ? e.message : e}`);
  process.exit(1);
}
const text = JSON.stringify(JSON.parse(stdout), null, 2) + "\n";

if (check) {
  const current = await readFile(target, "utf8").catch(() => "");
  if (current !== text) {
    console.error(
      "check:openapi: ui/openapi.json is not the server's current OpenAPI document.\n" +
        "  Refresh it: (cd ui && npm run fetch:api && npm run gen:api), then commit both files.",
    );
    process.exit(1);
  }
  console.log(`check:openapi: ui/openapi.json is ${binary}'s document`);
} else {
  await writeFile(target, text);
  console.log("fetch:api: wrote ui/openapi.json; now run `npm run gen:api`");
}
