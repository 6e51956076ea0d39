// The browser every test and benchmark drives: Debian's Chromium package,
// never a downloaded build, headless and quiet on a machine without a
// network. Playwright gives each launch a fresh profile directory.

/** The browser: Debian's package (`apt-get install chromium`). */
export const CHROMIUM = process.env.CHROMIUM_BIN ?? "/usr/bin/chromium";

/** Flags for a quiet, headless, offline Chromium. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
