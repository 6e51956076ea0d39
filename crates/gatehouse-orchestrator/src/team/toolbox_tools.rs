//! The operator's toolbox in a team run (`serve --team-tools FILE`): the
//! tools beyond the built-in ones that a run input granted an agent
//! (workspace files, `web_search`, `SERVER.TOOL` MCP tools, command tools)
//! are listed in its prompt in its model family's template, checked in the
//! text protocol, and intercepted here.
//!
//! Workspace, MCP and `web_search` calls run through [`Toolbox::call`] in
//! the run's own workspace, their answer journaled as a `tool_call` turn
//! (`team:N:tool:I`), so a restart never runs a tool twice. A command tool
//! first opens an approval gate (`team:N:tool:I:approval`) showing the
//! exact argv and working directory, which only a person may decide and
//! only approve or reject: it runs on approval, and the agent is told the
//! reviewer's reason on a rejection. The argv comes from the operator's
//! template; an agent's arguments only fill its placeholders. A command is
//! noted as started (`team:N:tool:I:started`) before it runs (and so is an
//! MCP server's tool, which acts outside the run), so a restart
//! that finds it started without an outcome tells the agent so and never
//! runs it twice.

use gatehouse_engine::{DecisionAction, NewGate};
use gatehouse_providers::text_tools::{self, ModelFamily, ToolSignature};
use serde_json::{json, Value};

use crate::command_tools::CommandOutcome;
use crate::driver::{decision_of, Driver, Handle, Record, Step};
use crate::toolbox::{Prepared, Toolbox};

use super::tools::{BuiltinTool, ToolCall};
use super::TeamAgent;

/// The most characters of a command's stdout and stderr kept on its turn.
const TAIL: usize = 2_000;

/// The toolbox tools granted to `agent`, as its model is shown them.
pub(crate) fn granted(toolbox: Option<&Toolbox>, agent: &TeamAgent) -> Vec<ToolSignature> {
    let Some(toolbox) = toolbox else {
        return Vec::new();
    };
    toolbox.signatures().into_iter().filter(|s| agent.tools.contains(&s.name)).collect()
}

/// The prompt's tool section: every tool the agent may call and how to
/// call one in text, in the template of its model's family (DeepSeek's,
/// or the default). Built-in tools keep their hand-written signatures.
pub(crate) fn tools_section(agent: &TeamAgent, builtins: &[BuiltinTool], more: &[ToolSignature]) -> String {
    let mut signatures: Vec<ToolSignature> = builtins.iter().map(|t| builtin_signature(*t)).collect();
    signatures.extend(more.iter().cloned());
    let mut section = text_tools::tools_prompt(&signatures, ModelFamily::of(&agent.model));
    for tool in builtins {
        let generated = format!("- {}\n", builtin_signature(*tool).line());
        section = section.replacen(&generated, &format!("- {}\n", tool.signature()), 1);
    }
    section
}

fn builtin_signature(tool: BuiltinTool) -> ToolSignature {
    ToolSignature::new(tool.name(), tool.signature(), tool.schema())
}

/// Whether `call` is for a toolbox tool `agent` was granted (not a built-in).
pub(crate) fn is_toolbox_call(agent: &TeamAgent, call: &ToolCall) -> bool {
    BuiltinTool::named(&call.name).is_none() && agent.tools.contains(&call.name)
}

/// Intercepts a granted toolbox tool's call under `key`: the answer for the agent.
pub(crate) async fn intercept(d: &mut Driver, agent: &TeamAgent, call: &ToolCall, key: &str) -> Step<String> {
    let h = d.handle();
    let prepared = match h.orchestrator().toolbox() {
        None => Err(format!("`{}` is not set up on this server (it has no --team-tools)", call.name)),
        Some(toolbox) => toolbox.prepare(&call.name, &call.args),
    };
    match prepared {
        Err(refusal) => journal(d, agent, call, key, async move { Ok(Ran::Answer(refusal)) }).await,
        Ok(Prepared::Ready) => {
            // An MCP tool acts outside the run: noted before it is called, so a
            // restart that finds it called but not answered never calls it again.
            let outside = h.orchestrator().toolbox().is_some_and(|t| t.acts_outside(&call.name));
            let started = format!("{key}:started");
            if outside && !d.journaled(key) {
                if d.journaled(&started) {
                    let answer = format!(
                        "`{}` was called before Gatehouse restarted and what it did is unknown; it was not called again.",
                        call.name
                    );
                    return journal(d, agent, call, key, async move { Ok(Ran::Answer(answer)) }).await;
                }
                let meta = json!({"tool_started": {"tool": call.name, "args": call.args}});
                d.note(&started, format!("Calling `{}`.", call.name), meta).await?;
            }
            let (name, args, run) = (call.name.clone(), call.args.clone(), h.run_id.to_string());
            let work = async move {
                let toolbox = h.orchestrator().toolbox().ok_or("the toolbox went away")?;
                Ok(Ran::Answer(toolbox.call(&run, &name, &args, None).await?))
            };
            journal(d, agent, call, key, work).await
        }
        Ok(Prepared::NeedsApproval { argv }) => command(d, agent, call, key, argv).await,
    }
}

/// What a toolbox call came to.
enum Ran {
    Answer(String),
    Command { argv: Vec<String>, workdir: String, outcome: CommandOutcome },
}

/// A command tool's call: a person approves its exact argv first.
async fn command(d: &mut Driver, agent: &TeamAgent, call: &ToolCall, key: &str, argv: Vec<String>) -> Step<String> {
    let h = d.handle();
    let workdir = match workdir(&h) {
        Ok(dir) => dir,
        Err(e) => return journal(d, agent, call, key, async move { Ok(Ran::Answer(e)) }).await,
    };
    // Once its outcome is journaled, a restart neither asks again nor runs it again.
    if !d.journaled(key) {
        let gate = approval_gate(agent, call, &argv, &workdir);
        let gate = d.ask(&format!("{key}:approval"), "command_approval", gate).await?;
        let decision = decision_of(&gate);
        if decision.action != DecisionAction::Approve {
            let reason = decision.text.as_deref().map(str::trim).filter(|t| !t.is_empty()).unwrap_or("no reason given");
            let answer = format!("A person refused to run `{}` ({}): {reason}", call.name, decision.decided_by);
            return journal(d, agent, call, key, async move { Ok(Ran::Answer(answer)) }).await;
        }
        // Noted before it runs: a restart that finds it started but not
        // finished never runs it a second time.
        let started = format!("{key}:started");
        if d.journaled(&started) {
            let answer = format!(
                "`{}` was started before Gatehouse restarted and what it did is unknown; it was not run again.",
                call.name
            );
            return journal(d, agent, call, key, async move { Ok(Ran::Answer(answer)) }).await;
        }
        d.checkpoint().await?;
        let meta = json!({"command_started": {"tool": call.name, "argv": argv, "workdir": workdir}});
        d.note(&started, format!("Running the approved command `{}`.", call.name), meta).await?;
    }
    let (name, args, run) = (call.name.clone(), call.args.clone(), h.run_id.to_string());
    let work = async move {
        let toolbox = h.orchestrator().toolbox().ok_or("the toolbox went away")?;
        let outcome = toolbox.run_command(&run, &name, &args, Some(&argv)).await?;
        Ok(Ran::Command { argv, workdir, outcome })
    };
    journal(d, agent, call, key, work).await
}

fn workdir(h: &Handle) -> Result<String, String> {
    let toolbox = h.orchestrator().toolbox().ok_or("the toolbox went away")?;
    Ok(toolbox.workspace(&h.run_id.to_string())?.root().display().to_string())
}

/// The approval a command tool waits for: only a person decides it, and
/// only approve or reject (an edit could not change what runs).
fn approval_gate(agent: &TeamAgent, call: &ToolCall, argv: &[String], workdir: &str) -> NewGate {
    let shown = argv.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ");
    let text = format!(
        "**{}** ({}) wants to run the command tool `{}`:\n\n```\n{shown}\n```\n\nin `{workdir}`",
        agent.name, agent.role, call.name
    );
    let payload = json!({"tool": call.name, "argv": argv, "workdir": workdir, "agent": agent.name, "args": call.args});
    let mut gate = NewGate::approval(format!("run `{}`", call.name), text, payload);
    gate.requires_human = true;
    gate.allowed_actions = vec![DecisionAction::Approve, DecisionAction::Reject];
    gate
}

/// An argv entry as a reader would type it.
fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty() && arg.chars().all(|c| c.is_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

/// Journals a toolbox call's outcome as a `tool_call` turn under `key`
/// (replayed, never redone, when the run is driven again).
async fn journal(
    d: &mut Driver,
    agent: &TeamAgent,
    call: &ToolCall,
    key: &str,
    work: impl std::future::Future<Output = Result<Ran, String>>,
) -> Step<String> {
    let meta = json!({"tool_name": call.name, "args": call.args});
    d.step(key, "tool_call", || async move {
        let ran = work.await.unwrap_or_else(|e| Ran::Answer(format!("`{}` failed: {e}", call.name)));
        let (answer, extra) = match ran {
            Ran::Answer(answer) => (answer, Value::Null),
            Ran::Command { argv, workdir, outcome } => {
                let extra = json!({"argv": argv, "workdir": workdir, "exit_code": outcome.exit_code,
                    "timed_out": outcome.timed_out, "stdout_tail": tail(&outcome.stdout),
                    "stderr_tail": tail(&outcome.stderr)});
                (outcome.for_model(), extra)
            }
        };
        let content = format!("**{}** called `{}`: {answer}", agent.name, call.name);
        let mut record = Record::new(answer, content).with("tool_call", meta).with("team_agent", json!(agent.name));
        if !extra.is_null() {
            record = record.with("command", extra);
        }
        Ok(record)
    })
    .await
}

/// The last [`TAIL`] characters of `text`.
fn tail(text: &str) -> String {
    let count = text.chars().count();
    text.chars().skip(count.saturating_sub(TAIL)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(model: &str) -> TeamAgent {
        TeamAgent {
            name: "a".into(),
            role: "r".into(),
            provider: "p".into(),
            model: model.into(),
            tool: "p:m".into(),
            tools: vec!["read_artifact".into()],
        }
    }

    #[test]
    fn the_tool_section_follows_the_model_family_and_keeps_built_in_signatures() {
        let more = [ToolSignature::new(
            "read_artifact",
            "Read a file",
            json!({"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}),
        )];
        let builtins = [BuiltinTool::Handoff];
        let generic = tools_section(&agent("gpt-4o"), &builtins, &more);
        let deepseek = tools_section(&agent("deepseek-chat"), &builtins, &more);
        assert!(generic.starts_with("Available Tools:\n"), "{generic}");
        assert!(deepseek.contains("outside any <think> block"), "{deepseek}");
        for section in [&generic, &deepseek] {
            assert!(section.contains(&format!("- {}\n", BuiltinTool::Handoff.signature())), "{section}");
            assert!(section.contains("- read_artifact(path: str): Read a file\n"), "{section}");
        }
    }

    #[test]
    fn argv_entries_are_shown_quoted_as_typed() {
        assert_eq!(shell_quote("pytest"), "pytest");
        assert_eq!(shell_quote("x; rm -rf /"), "'x; rm -rf /'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(tail(&"a".repeat(TAIL + 5)).len(), TAIL);
    }
}
