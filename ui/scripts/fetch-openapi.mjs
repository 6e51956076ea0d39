// Refreshes ui/openapi.json from the server itself: starts `gatehouse serve`
// on a free loopback port over a throwaway database, reads
// GET /api/hitl/openapi.json (served without a token) and stops it.
//
// Usage: node scripts/fetch-openapi.mjs [path/to/gatehouse]
//   (default: $GATEHOUSE_BIN, else ../target/debug/gatehouse; build it with
//   `cargo build -p gatehouse-cli`). Then run `npm run gen:api`.

import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const binary = process.argv[2] ?? process.env.GATEHOUSE_BIN ?? join(root, "../target/debug/gatehouse");
const dir = await mkdtemp(join(tmpdir(), "gatehouse-openapi-"));

const server = spawn(binary, ["--db", join(dir, "openapi.db"), "serve", "--bind", "127.0.0.1:0"], {
  stdio: ["ignore", "pipe", "inherit"],
});

try {
  const url = await new Promise((resolveUrl, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`${binary} did not start listening within 30 s`)), 30_000);
    server.on("error", (e) => reject(new Error(`cannot run ${binary}: ${e.message}`)));
    server.on("exit", (code) => reject(new Error(`${binary} exited with ${code} before listening`)));
    server.stdout.on("data", (chunk) => {
      seen += chunk;
      const match = seen.match(/listening on (http:\/\/\S+)/);
      if (match) {
        clearTimeout(timer);
        resolveUrl(match[1]);
      }
    });
  });
  const response = await fetch(`${url}/api/hitl/openapi.json`);
  if (!response.ok) throw new Error(`GET /api/hitl/openapi.json answered ${response.status}`);
  const document = await response.json();
  await writeFile(join(root, "openapi.json"), JSON.stringify(document, null, 2) + "\n");
  console.log(`fetch:api: wrote ui/openapi.json from ${url}; now run \`npm run gen:api\``);
} finally {
  server.kill("SIGTERM");
  await rm(dir, { recursive: true, force: true });
}
