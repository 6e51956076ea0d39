// The alert events the page's stream listens for: the server raises and
// clears alerts (a threshold crossed, then back within) as events of no run.

import type { EventType } from "../api/types";

/** The events that raise and clear alerts. */
export const ALERT_EVENTS = ["alert_raised", "alert_cleared"] as const satisfies readonly EventType[];
