// @gatehouse/client: the TypeScript client of Gatehouse's API. The adapters
// for agent frameworks are separate entry points (`@gatehouse/client/ai-sdk`,
// `/langgraph`, `/openai-agents`, `/mcp`), so importing this one loads none.

export { Client, settle } from "./client.js";
export type { ClientOptions, GateFilter, GateOptions, RunOptions, ToolCallOptions, WaitOptions } from "./client.js";
export {
  AuthError,
  Cancelled,
  Conflict,
  ConnectionFailed,
  Expired,
  GateOutcome,
  GatehouseError,
  InvalidRequest,
  NotFound,
  Rejected,
  Released,
  ServerError,
  WaitTimeout,
  errorForStatus,
} from "./errors.js";
export { SseParser } from "./events.js";
export type { EventFilter, StreamedEvent } from "./events.js";
export { DEFAULT_RETRY, Transport } from "./http.js";
export type { Fetch, RetryPolicy, TransportOptions } from "./http.js";
export type * from "./types.js";
export type { components, paths } from "./schema.js";
