// Checks, before any browser starts, that what the tests drive exists. It
// builds nothing: scripts/test.sh builds the UI and the binary first.

import { existsSync } from "node:fs";
import { join } from "node:path";
import { CHROMIUM } from "./support/chromium.mjs";
import { BINARY, UI_DIR } from "./support/gatehouse.mjs";

export default function globalSetup(): void {
  const missing: string[] = [];
  if (!existsSync(BINARY)) missing.push(`${BINARY} (run \`cargo build -p gatehouse-cli\`)`);
  if (!existsSync(join(UI_DIR, "index.html"))) missing.push(`${UI_DIR}/index.html (run \`cd ui && npm ci && npm run build\`)`);
  if (!existsSync(CHROMIUM)) missing.push(`${CHROMIUM} (run \`apt-get install -y chromium\`)`);
  if (missing.length > 0) throw new Error(`the end-to-end tests need:\n  ${missing.join("\n  ")}`);
}
