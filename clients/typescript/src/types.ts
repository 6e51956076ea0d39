// Names for the generated API types the client uses. Aliases only: every
// shape comes from schema.ts, which is generated from the server's OpenAPI
// document (`npm run gen:api`), so the Rust types stay the one source.

import type { components } from "./schema.js";

type Schemas = components["schemas"];

export type ActionChoice = Schemas["ActionChoice"];
export type ActionDecision = Schemas["ActionDecision"];
export type ApiErrorBody = Schemas["ApiErrorBody"];
export type ApiErrorCode = Schemas["ApiErrorCode"];
export type BlockingMode = Schemas["BlockingMode"];
export type Decision = Schemas["Decision"];
export type DecisionAction = Schemas["DecisionAction"];
export type DecisionInput = Schemas["DecisionInput"];
export type Event = Schemas["Event"];
export type EventPage = Schemas["EventPage"];
export type Gate = Schemas["Gate"];
export type GateContext = Schemas["GateContext"];
export type GateKind = Schemas["GateKind"];
export type GateList = Schemas["GateList"];
export type GateSpec = Schemas["GateSpec"];
export type GateStatus = Schemas["GateStatus"];
export type NewGate = Schemas["NewGate"];
export type NodeReached = Schemas["NodeReached"];
export type DeclaredGate = Schemas["DeclaredGate"];
export type NewTurn = Schemas["NewTurn"];
export type OpenedGate = Schemas["OpenedGate"];
export type PlanOperation = Schemas["PlanOperation"];
export type PlanView = Schemas["PlanView"];
export type Priority = Schemas["Priority"];
export type ProposedAction = Schemas["ProposedAction"];
export type RunStateResponse = Schemas["RunStateResponse"];
export type RunStatusResponse = Schemas["RunStatusResponse"];
export type RunSummary = Schemas["RunSummary"];
export type ScoreReply = Schemas["ScoreReply"];
export type ScoreRequest = Schemas["ScoreRequest"];
export type StartRunRequest = Schemas["StartRunRequest"];
export type StartRunResponse = Schemas["StartRunResponse"];
export type ToolCallReply = Schemas["ToolCallReply"];
export type ToolOptions = Schemas["ToolOptions"];
export type TurnReply = Schemas["TurnReply"];
export type WhoAmI = Schemas["WhoAmI"];

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A gate spec's kind-specific fields, without its `kind` tag. */
export type SpecOf<K extends GateKind> = Omit<Extract<GateSpec, { kind: K }>, "kind">;
