//! The Gatehouse engine: the domain of human-in-the-loop review (runs,
//! turns, gates, decisions, scoring, policies, plans, shared context),
//! its durable SQLite store with a hash-chained event log, and recordings.
//!
//! It builds and tests without Tauri, a webview or a network: the HTTP
//! server and the desktop shell are thin layers over [`Engine`].
//!
//! ```no_run
//! use gatehouse_engine::{Engine, EngineConfig, NewRun, NewGate, DecisionInput};
//! let engine = Engine::open("gatehouse.db", EngineConfig::default())?;
//! let run = engine.create_run(NewRun { agent: "deployer".into(), ..NewRun::default() }, "deployer")?;
//! let gate = engine.open_gate(&run.id, NewGate::question("Which region?"), "deployer")?;
//! let decided = engine.resolve_gate(&gate.id, DecisionInput::respond("eu-west-1"), "alice")?;
//! assert_eq!(decided.decision.unwrap().decided_by, "alice");
//! # Ok::<(), gatehouse_engine::EngineError>(())
//! ```

pub mod alert;
pub mod allow_rule;
pub mod api_error;
pub mod decision;
pub mod diff;
pub mod engine;
pub mod error;
pub mod event;
pub mod form;
pub mod gate;
pub mod ids;
pub mod metrics;
pub mod oversight;
pub mod plan;
pub mod policy;
pub mod private_files;
pub mod recording;
pub mod redact;
pub mod run;
pub mod scoring;
pub mod search;
pub mod store;
pub mod token;
pub mod tool_gates;

pub use alert::{Alert, AlertFigures, AlertKind, SlaCompliance, SlaTargets};
pub use allow_rule::{AllowRule, AllowRuleFilter, AllowRuleRequest, AllowRuleStatus, NewAllowRule};
pub use decision::{ActionChoice, Decision, DecisionAction, DecisionInput, DecisionOrigin};
pub use engine::{AuditReport, Database, Engine, EngineConfig, PurgeReport, RunAccess, Subscription};
pub use error::{EngineError, ErrorCode, Result};
pub use event::{Event, EventBody, EventKind};
pub use gate::{
    ActionDecision, BlockingMode, Decider, DeclaredGate, Escalation, Gate, GateContext, GateKind, GateSpec, GateStatus,
    NewGate, PresetOption, Priority, ProposedAction, Quorum, Released, TimeoutFallback,
};
pub use ids::{AllowRuleId, Clock, GateId, ManualClock, RunId, SystemClock};
pub use metrics::Metrics;
pub use oversight::{Oversight, ReviewFloor, Weakening};
pub use recording::{Recording, RecordingScope, Replay};
pub use run::{
    Breakpoint, Directive, DirectiveAction, Instruction, NewRun, NewTurn, Role, Run, RunControl, RunStatus, StepMode,
    Turn,
};
pub use search::{GateSearch, SearchHit, SearchResults, SnippetPart};
pub use store::{AnyStore, GateFilter, PgOptions, PgStore, RunFilter, SqliteStore, Store, StoreOptions};
pub use token::{Token, TokenRole};
