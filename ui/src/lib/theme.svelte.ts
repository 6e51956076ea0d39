// The colour theme: the reviewer's choice (light, dark, or the system's,
// remembered in localStorage) turned into `data-theme` on <html>, which
// app.css reads. While the choice is the system's, a change of
// `prefers-color-scheme` is followed at once.

export type ThemeChoice = "system" | "light" | "dark";
export type Theme = "light" | "dark";

const KEY = "gatehouse.theme";

/** The stored choice, "system" when none or unreadable. */
export function readChoice(storage: Pick<Storage, "getItem"> | null): ThemeChoice {
  try {
    const v = storage?.getItem(KEY);
    return v === "light" || v === "dark" ? v : "system";
  } catch {
    return "system";
  }
}

export function saveChoice(storage: Pick<Storage, "setItem" | "removeItem"> | null, choice: ThemeChoice): void {
  try {
    if (choice === "system") storage?.removeItem(KEY);
    else storage?.setItem(KEY, choice);
  } catch {
    // Storage refused (private mode, quota): the choice lasts this page only.
  }
}

/** The theme shown for `choice` when the system prefers dark or not. */
export function themeFor(choice: ThemeChoice, systemDark: boolean): Theme {
  return choice === "system" ? (systemDark ? "dark" : "light") : choice;
}

/** The choice after this one, as the header's button cycles: system, light, dark. */
export function nextChoice(choice: ThemeChoice): ThemeChoice {
  return choice === "system" ? "light" : choice === "light" ? "dark" : "system";
}

/** The page's theme, applied to <html> and kept in step with the system. */
export class ThemeState {
  choice = $state<ThemeChoice>("system");
  /** Whether the system prefers dark, followed live. */
  systemDark = $state(false);
  #query: MediaQueryList | null;
  #root: HTMLElement;
  #storage: Storage | null;

  constructor(win: Window = window) {
    this.#root = win.document.documentElement;
    this.#storage = storageOf(win);
    this.#query = typeof win.matchMedia === "function" ? win.matchMedia("(prefers-color-scheme: dark)") : null;
    this.choice = readChoice(this.#storage);
    this.systemDark = this.#query?.matches ?? false;
    this.#query?.addEventListener("change", (e) => {
      this.systemDark = e.matches;
      this.#apply();
    });
    this.#apply();
  }

  /** The theme shown now. */
  get theme(): Theme {
    return themeFor(this.choice, this.systemDark);
  }

  choose(choice: ThemeChoice): void {
    this.choice = choice;
    saveChoice(this.#storage, choice);
    this.#apply();
  }

  #apply(): void {
    this.#root.dataset.theme = this.theme;
  }
}

function storageOf(win: Window): Storage | null {
  try {
    return win.localStorage;
  } catch {
    return null;
  }
}
