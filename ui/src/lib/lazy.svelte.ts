// A component fetched and compiled on first use (`import()`), not at page
// load: the idle desk never parses the views it does not show (runs,
// search, rules, metrics) or the open gate's modal, which keeps the desktop
// app's web process smaller (docs/benchmarks.md, "Desktop app"). Vite puts
// each such module and its styles in a chunk of their own.

export class Lazy<C> {
  /** The component once loaded; null until then. */
  component = $state.raw<C | null>(null);
  /** Why it could not be loaded, if it could not; a later `load` tries again. */
  error = $state<string | null>(null);
  #loading: Promise<void> | null = null;
  readonly #fetch: () => Promise<{ default: C }>;

  constructor(fetch: () => Promise<{ default: C }>) {
    this.#fetch = fetch;
  }

  /** Loads the component once; resolves when it is there (or could not be had). */
  load(): Promise<void> {
    this.#loading ??= this.#fetch().then(
      (module) => {
        this.error = null;
        this.component = module.default;
      },
      (e: unknown) => {
        this.#loading = null;
        this.error = `This part of the page could not be loaded (${e instanceof Error ? e.message : String(e)}). Reload the page to try again.`;
      },
    );
    return this.#loading;
  }
}
