// Names for the generated API types the UI uses. Aliases only: every shape
// comes from schema.d.ts, which is generated from the server's OpenAPI
// document (`npm run gen:api`), so the Rust types stay the one source.

import type { components, paths } from "./schema";

type Schemas = components["schemas"];

export type ActionChoice = Schemas["ActionChoice"];
export type Alert = Schemas["Alert"];
export type AlertsResponse = Schemas["AlertsResponse"];
export type SlaCompliance = Schemas["SlaCompliance"];
export type ReplayFrame = Schemas["ReplayFrame"];
export type ReplayStatus = Schemas["ReplayStatus"];
export type ActionDecision = Schemas["ActionDecision"];
export type AllowRule = Schemas["AllowRule"];
export type AllowRuleRequest = Schemas["AllowRuleRequest"];
export type AllowRuleStatus = Schemas["AllowRuleStatus"];
export type ApiErrorBody = Schemas["ApiErrorBody"];
export type ApiErrorCode = Schemas["ApiErrorCode"];
export type BlockingMode = Schemas["BlockingMode"];
export type Decision = Schemas["Decision"];
export type DecisionAction = Schemas["DecisionAction"];
export type DecisionInput = Schemas["DecisionInput"];
export type FieldChange = Schemas["FieldChange"];
export type Gate = Schemas["Gate"];
export type GateDetail = Schemas["GateDetail"];
export type GateKind = Schemas["GateKind"];
export type GateHit = Schemas["GateHit"];
export type GateList = Schemas["GateList"];
export type GateSearchPage = Schemas["GateSearchPage"];
export type GateSpec = Schemas["GateSpec"];
export type GateStatus = Schemas["GateStatus"];
export type GateSummary = Schemas["GateSummary"];
export type Identity = Schemas["WhoAmI"];
export type ImportSummary = Schemas["ImportSummary"];
export type Instruction = Schemas["Instruction"];
/** The review metrics, with the server's webhook deliveries. */
export type Metrics = Schemas["MetricsResponse"];
export type Plan = Schemas["Plan"];
export type PlanRevision = Schemas["PlanRevision"];
export type PlanTask = Schemas["PlanTask"];
export type Priority = Schemas["Priority"];
export type ProposedAction = Schemas["ProposedAction"];
export type ProvidersResponse = Schemas["ProvidersResponse"];
export type ProgressState = Schemas["ProgressState"];
export type QualityScore = Schemas["QualityScore"];
export type Recording = Schemas["Recording"];
export type Role = Schemas["Role"];
export type Run = Schemas["Run"];
export type DeclaredGate = Schemas["DeclaredGate"];
export type RunState = Schemas["RunStateResponse"];
export type RunStatus = Schemas["RunStatus"];
export type RunSummary = Schemas["RunSummary"];
export type SnippetPart = Schemas["SnippetPart"];
export type StartRunRequest = Schemas["StartRunRequest"];
export type StepMode = Schemas["StepMode"];
export type TaskStatus = Schemas["TaskStatus"];
export type Turn = Schemas["Turn"];
export type Vote = Schemas["Vote"];
/** An event without its place in the log (as recordings hold them). */
export type EventBody = Schemas["EventBody"];
/** One event of the log, as the event stream sends it (`data` of each message). */
export type LogEvent = Schemas["Event"];
/** The `type` of an event, also the SSE `event:` name. */
export type EventType = LogEvent["type"];
/** Every path the server documents. */
export type ApiPath = keyof paths;
