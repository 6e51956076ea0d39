// Builds the reviewer UI into ui/dist, which `gatehouse serve` serves at `/`
// under a strict content security policy: no inline scripts or styles, so
// nothing is inlined into index.html and no module-preload polyfill is added.
// `npm run dev` proxies the API to a running server (GATEHOUSE_URL, default
// http://127.0.0.1:7777), presenting the server's own origin to its origin check.

import { svelte } from "@sveltejs/vite-plugin-svelte";
import { defineConfig } from "vitest/config";

const server = process.env.GATEHOUSE_URL ?? "http://127.0.0.1:7777";

export default defineConfig({
  plugins: [svelte()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
  server: {
    proxy: {
      "/api": {
        target: server,
        changeOrigin: true,
        // The server refuses other origins; to it, the proxied page is its own.
        headers: { origin: server },
      },
    },
  },
  // Tests run in Node but need Svelte's client runtime for runes in stores.
  resolve: process.env.VITEST ? { conditions: ["browser"] } : undefined,
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
    // theme.test.ts reads app.css as text (`?raw`), which vitest otherwise empties.
    css: { include: [/app\.css/] },
  },
});
