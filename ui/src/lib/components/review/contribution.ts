// What a kind's review adds to the modal's draft: an edited payload (and
// whether the edit is valid), or a quality gate's score.

import type { ScoreDraft } from "./quality";
import type { Json } from "../payload";
import type { CriterionDraft } from "./quality";

export interface ReviewContribution {
  /** The payload an `edit` decision sends, when the reviewer changed something. */
  editedPayload?: Json;
  /** Whether the reviewer's edit cannot be sent as it is (an invalid plan). */
  invalid: boolean;
  /** Why, when invalid. */
  problem?: string;
  quality?: ScoreDraft;
  /** A quality gate's scores and justifications so far, kept for a reopened gate. */
  criteria?: CriterionDraft[];
}

export const NO_CONTRIBUTION: ReviewContribution = { invalid: false };
