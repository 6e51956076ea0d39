// The state of a reviewer's two-step action (restart a task, restart a
// plan task, delete a remembered value), shown with `ConfirmStep.svelte`:
// asked or not, on its way or not, and what the server refused. The
// action is sent only from the confirm button, and never twice at a time.

import type { Answer } from "../api/client";

export class ConfirmAction {
  /** The first step was taken: the confirmation shows. */
  asking = $state(false);
  /** The action is on its way: the confirm button waits. */
  busy = $state(false);
  /** What the server said was wrong with the last one, if anything. */
  problem = $state<string | null>(null);

  /** The first step: unless `disabled`, the confirmation shows. */
  ask(disabled = false): void {
    if (!disabled) this.asking = true;
  }

  /** Kept as it was: the confirmation goes. */
  cancel(): void {
    this.asking = false;
  }

  /**
   * The second step: sends `action` (not while one is on its way), closes
   * the confirmation, and gives what it answered; none when it was refused
   * (the problem is kept to show) or not sent.
   */
  async confirm<T>(action: () => Promise<Answer<T>>): Promise<{ value: T } | null> {
    if (this.busy) return null;
    this.busy = true;
    const answer = await action();
    this.busy = false;
    this.asking = false;
    if (!answer.ok) {
      this.problem = answer.message;
      return null;
    }
    this.problem = null;
    return { value: answer.value };
  }
}
