// The reviewer's diff layout, one for the page, kept in localStorage so
// every diff (a decided gate's, the editor's "your edits") opens the way it
// was last left. Storage that refuses (private mode, a quota) only means
// the choice is not remembered.

import { LAYOUT_KEY, parseLayout, type DiffLayout } from "./layout";

function stored(): DiffLayout {
  try {
    return parseLayout(globalThis.localStorage?.getItem(LAYOUT_KEY));
  } catch {
    return "split";
  }
}

class LayoutChoice {
  current = $state<DiffLayout>(stored());

  choose(next: DiffLayout): void {
    this.current = next;
    try {
      globalThis.localStorage?.setItem(LAYOUT_KEY, next);
    } catch {
      // Not remembered; the choice still holds on this page.
    }
  }
}

export const diffLayout = new LayoutChoice();
