//! A reviewer steering a live run from the command line, as from the Runs
//! view: `runs instruct RUN TEXT` (held until an agent of the run asks for
//! its next directive), `runs control RUN MODE [--break-on SPEC]...` (step
//! mode and breakpoints), `runs step RUN` (a paused run goes on for one
//! agent turn) and `runs plan RUN OP` (one plan operation, JSON, as
//! `POST /runs/{id}/plan` takes it). All through the server, which refuses
//! agent tokens where a person's word is needed and records who did it.

use anyhow::{bail, Context, Result};
use reqwest::Method;
use serde_json::{json, Value};

use crate::client::Api;
use crate::out::outln;

/// `POST /runs/{id}/instructions`.
pub fn instruct(api: &Api, run_id: &str, text: &str) -> Result<()> {
    let _: Value = api.post(&["runs", run_id, "instructions"], &json!({"text": text}))?;
    outln!("instruction held on run {run_id} for the next agent to ask for its directive");
    Ok(())
}

/// `PUT /runs/{id}/control`: `mode` with the breakpoints `specs` say.
pub fn control(api: &Api, run_id: &str, mode: &str, specs: &[String]) -> Result<()> {
    let breakpoints = specs.iter().map(|s| breakpoint(s)).collect::<Result<Vec<Value>>>()?;
    let body = json!({"step_mode": mode, "breakpoints": breakpoints});
    let _: Value = api.send(api.request(Method::PUT, &["runs", run_id, "control"]).json(&body))?;
    outln!("run {run_id}: step mode {mode}, {} breakpoint(s)", breakpoints.len());
    Ok(())
}

/// A breakpoint as `--break-on` writes it: `tool_call[:TOOL]`,
/// `handoff[:AGENT]`, `error`, `agent:NAME` or `step:NAME`.
fn breakpoint(spec: &str) -> Result<Value> {
    let (on, arg) = spec.split_once(':').map_or((spec, None), |(on, arg)| (on, Some(arg).filter(|a| !a.is_empty())));
    Ok(match (on, arg) {
        ("tool_call", tool) => json!({"on": "tool_call", "tool": tool}),
        ("handoff", to) => json!({"on": "handoff", "to": to}),
        ("error", None) => json!({"on": "error"}),
        ("agent", Some(name)) => json!({"on": "agent", "name": name}),
        ("step", Some(name)) => json!({"on": "step", "name": name}),
        _ => bail!("--break-on `{spec}`: use tool_call[:TOOL], handoff[:AGENT], error, agent:NAME or step:NAME"),
    })
}

/// `POST /runs/{id}/step`.
pub fn step(api: &Api, run_id: &str) -> Result<()> {
    let _: Value = api.send(api.request(Method::POST, &["runs", run_id, "step"]))?;
    outln!("run {run_id} goes on for one agent turn");
    Ok(())
}

/// `POST /runs/{id}/plan` with the operation `op` (JSON).
pub fn plan(api: &Api, run_id: &str, op: &str) -> Result<()> {
    let op: Value = serde_json::from_str(op).context(
        "the plan operation is not JSON (e.g. '{\"op\": \"add_task\", \"description\": \"Write the changelog\"}')",
    )?;
    let revision: Value = api.post(&["runs", run_id, "plan"], &op)?;
    let number = revision["revision"].as_u64().unwrap_or_default();
    outln!("plan revision {number} of run {run_id}:");
    for change in revision["change_log"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        outln!("  {change}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breakpoints_are_written_as_the_api_takes_them() {
        assert_eq!(breakpoint("handoff").unwrap(), json!({"on": "handoff", "to": null}));
        assert_eq!(breakpoint("handoff:tester").unwrap(), json!({"on": "handoff", "to": "tester"}));
        assert_eq!(breakpoint("tool_call:store_memory").unwrap(), json!({"on": "tool_call", "tool": "store_memory"}));
        assert_eq!(breakpoint("error").unwrap(), json!({"on": "error"}));
        assert_eq!(breakpoint("step:agent_turn").unwrap(), json!({"on": "step", "name": "agent_turn"}));
        assert_eq!(breakpoint("agent:coder").unwrap(), json!({"on": "agent", "name": "coder"}));
        let bad = breakpoint("agent").unwrap_err().to_string();
        assert!(bad.starts_with("--break-on `agent`: use tool_call[:TOOL]"), "{bad}");
        assert!(breakpoint("whenever").is_err());
    }
}
