//! Command tools: programs the operator's configuration offers to a team's
//! agents as tools (`run_tests`, `git_status`), each an argument vector with
//! `{placeholders}` filled from the call's arguments, run in the run's
//! workspace. No shell is involved: an argument is one argv entry whatever
//! it holds, so a model cannot add commands, pipes or redirections.
//!
//! The team loop opens an approval gate before every command tool call (a
//! person sees the exact argv), and runs it only once approved; this module
//! only builds and runs the command. Output is captured up to
//! [`MAX_OUTPUT`] bytes, and a command past its timeout is killed.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use tokio::io::AsyncReadExt;

use gatehouse_providers::text_tools::ToolSignature;

/// The most output kept from a command (stdout and stderr each).
pub const MAX_OUTPUT: usize = 64 * 1024;
/// The longest a command may run unless its configuration says otherwise.
pub const DEFAULT_TIMEOUT_SECS: u64 = 300;

/// A command tool, as the operator configures it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandTool {
    /// What agents call it.
    pub name: String,
    /// What it does, one line.
    #[serde(default)]
    pub description: String,
    /// The program and its arguments; `{name}` in an entry is replaced by the call's argument `name`.
    pub command: Vec<String>,
    /// Each placeholder's description (all are required strings); defaults to the placeholders found.
    #[serde(default)]
    pub args: Map<String, Value>,
    /// Seconds before the command is killed.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

/// What a command did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandOutcome {
    /// Its exit code; `None` when it was killed (by a signal, or at its timeout).
    pub exit_code: Option<i32>,
    /// Whether it ran past its timeout.
    pub timed_out: bool,
    /// Its standard output, cut to [`MAX_OUTPUT`] bytes.
    pub stdout: String,
    /// Its standard error, cut likewise.
    pub stderr: String,
}

impl CommandOutcome {
    /// The answer a model is given.
    pub fn for_model(&self) -> String {
        let status = match (self.timed_out, self.exit_code) {
            (true, _) => "timed out and was stopped".to_owned(),
            (false, Some(code)) => format!("exited with code {code}"),
            (false, None) => "was stopped by a signal".to_owned(),
        };
        format!("The command {status}.\n--- stdout ---\n{}\n--- stderr ---\n{}", self.stdout, self.stderr)
    }
}

impl CommandTool {
    /// Checks the configuration: a name, a program, and placeholders that are plain names.
    pub fn check(&self) -> Result<(), String> {
        if self.name.trim().is_empty() || !self.name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-') {
            return Err(format!("command tool `{}`: its name must be letters, digits, `_` and `-`", self.name));
        }
        if self.command.first().is_none_or(|p| p.trim().is_empty()) {
            return Err(format!("command tool `{}`: `command` must start with the program", self.name));
        }
        for entry in &self.command {
            placeholders(entry).map_err(|e| format!("command tool `{}`: {e}", self.name))?;
        }
        Ok(())
    }

    /// Its placeholders, in order of first use.
    pub fn placeholders(&self) -> Vec<String> {
        let mut names = Vec::new();
        for entry in &self.command {
            for name in placeholders(entry).unwrap_or_default() {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        names
    }

    /// The tool as models are shown it: every placeholder a required string.
    pub fn signature(&self) -> ToolSignature {
        let names = self.placeholders();
        let properties: Map<String, Value> = names
            .iter()
            .map(|n| {
                let about = self.args.get(n).and_then(Value::as_str).unwrap_or_default();
                (n.clone(), json!({"type": "string", "description": about}))
            })
            .collect();
        ToolSignature::new(
            self.name.clone(),
            self.description.clone(),
            json!({"type": "object", "required": names, "properties": properties, "additionalProperties": false}),
        )
    }

    /// The argv for a call with `args`, or what is wrong with them (worded for the model).
    pub fn argv(&self, args: &Value) -> Result<Vec<String>, String> {
        let empty = Map::new();
        let given = args.as_object().unwrap_or(&empty);
        if let Some(extra) = given.keys().find(|k| !self.placeholders().contains(k)) {
            return Err(format!(
                "`{}` takes no argument `{extra}`; it takes {}",
                self.name,
                self.placeholders().join(", ")
            ));
        }
        self.command
            .iter()
            .map(|entry| {
                let mut out = String::new();
                let mut rest = entry.as_str();
                while let Some(start) = rest.find('{') {
                    let end = rest[start..].find('}').map(|e| start + e).unwrap_or(rest.len());
                    let name = &rest[start + 1..end];
                    let value = match given.get(name) {
                        Some(Value::String(s)) => s.clone(),
                        Some(Value::Number(n)) => n.to_string(),
                        Some(Value::Bool(b)) => b.to_string(),
                        Some(_) => return Err(format!("`{name}` must be a string")),
                        None => return Err(format!("`{}` needs the argument `{name}`", self.name)),
                    };
                    if value.contains('\0') {
                        return Err(format!("`{name}` holds a NUL character"));
                    }
                    out.push_str(&rest[..start]);
                    out.push_str(&value);
                    rest = &rest[(end + 1).min(rest.len())..];
                }
                out.push_str(rest);
                Ok(out)
            })
            .collect()
    }

    /// Runs `argv` (from [`CommandTool::argv`]) in `workdir`.
    pub async fn run(&self, argv: &[String], workdir: &Path) -> Result<CommandOutcome, String> {
        let (program, rest) = argv.split_first().ok_or("the command is empty")?;
        let mut child = tokio::process::Command::new(program)
            .args(rest)
            .current_dir(workdir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("`{program}` could not be started: {e}"))?;
        let stdout = child.stdout.take().map(|s| tokio::spawn(read_capped(s)));
        let stderr = child.stderr.take().map(|s| tokio::spawn(read_capped(s)));
        let limit = Duration::from_secs(self.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS));
        let (exit_code, timed_out) = match tokio::time::timeout(limit, child.wait()).await {
            Ok(status) => (status.map_err(|e| format!("`{program}` could not be waited on: {e}"))?.code(), false),
            Err(_) => {
                let _ = child.kill().await;
                (None, true)
            }
        };
        let collect = |h: Option<tokio::task::JoinHandle<String>>| async move {
            match h {
                Some(h) => h.await.unwrap_or_default(),
                None => String::new(),
            }
        };
        Ok(CommandOutcome { exit_code, timed_out, stdout: collect(stdout).await, stderr: collect(stderr).await })
    }
}

/// The placeholders of one argv entry.
fn placeholders(entry: &str) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    let mut rest = entry;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            return Err(format!("`{entry}` opens a placeholder it does not close"));
        };
        let name = &rest[start + 1..start + len];
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return Err(format!("`{{{name}}}` in `{entry}` is not a placeholder name"));
        }
        names.push(name.to_owned());
        rest = &rest[start + len + 1..];
    }
    Ok(names)
}

/// Reads a stream to its end, keeping the first [`MAX_OUTPUT`] bytes.
async fn read_capped(mut stream: impl tokio::io::AsyncRead + Unpin) -> String {
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    let mut cut = false;
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let room = MAX_OUTPUT.saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..n.min(room)]);
        cut |= n > room;
    }
    let mut text = String::from_utf8_lossy(&kept).into_owned();
    if cut {
        text.push_str(&format!("\n… (cut at {MAX_OUTPUT} bytes)"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(command: &[&str]) -> CommandTool {
        CommandTool {
            name: "run_tests".into(),
            description: "Run the tests".into(),
            command: command.iter().map(|s| (*s).to_owned()).collect(),
            args: Map::from_iter([("filter".to_owned(), json!("which tests"))]),
            timeout_secs: None,
        }
    }

    #[test]
    fn placeholders_are_filled_one_argv_entry_each_with_no_shell() {
        let t = tool(&["sh", "-c", "echo {filter}", "--name={filter}"]);
        t.check().unwrap();
        assert_eq!(t.placeholders(), ["filter"]);
        let argv = t.argv(&json!({"filter": "x; rm -rf /"})).unwrap();
        assert_eq!(argv, ["sh", "-c", "echo x; rm -rf /", "--name=x; rm -rf /"]);
        let sig = t.signature();
        assert_eq!(sig.parameters["required"], json!(["filter"]));
        assert_eq!(sig.parameters["properties"]["filter"]["description"], "which tests");
    }

    #[test]
    fn missing_extra_and_ill_typed_arguments_are_answered() {
        let t = tool(&["pytest", "-k", "{filter}"]);
        assert_eq!(t.argv(&json!({})).unwrap_err(), "`run_tests` needs the argument `filter`");
        assert_eq!(
            t.argv(&json!({"filter": "a", "path": "/"})).unwrap_err(),
            "`run_tests` takes no argument `path`; it takes filter"
        );
        assert_eq!(t.argv(&json!({"filter": ["a"]})).unwrap_err(), "`filter` must be a string");
    }

    #[test]
    fn a_bad_configuration_is_named() {
        assert!(tool(&[]).check().unwrap_err().contains("must start with the program"));
        assert!(tool(&["echo", "{unclosed"]).check().unwrap_err().contains("does not close"));
        assert!(tool(&["echo", "{a b}"]).check().unwrap_err().contains("is not a placeholder name"));
        let mut spaced = tool(&["echo"]);
        spaced.name = "run tests".into();
        assert!(spaced.check().is_err());
    }

    #[tokio::test]
    async fn a_command_runs_in_the_workdir_with_its_output_and_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("marker.txt"), "here").unwrap();
        let t = tool(&["sh", "-c", "cat marker.txt; echo \" {filter}\"; echo oops >&2; exit 3"]);
        let argv = t.argv(&json!({"filter": "unit"})).unwrap();
        let out = t.run(&argv, dir.path()).await.unwrap();
        assert_eq!(
            out,
            CommandOutcome {
                exit_code: Some(3),
                timed_out: false,
                stdout: "here unit\n".into(),
                stderr: "oops\n".into()
            }
        );
        assert!(out.for_model().starts_with("The command exited with code 3."));
    }

    #[tokio::test]
    async fn a_command_past_its_timeout_is_stopped_and_output_is_capped() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = tool(&["sleep", "30"]);
        t.timeout_secs = Some(1);
        let out = t.run(&t.argv(&json!({})).unwrap(), dir.path()).await.unwrap();
        assert!(out.timed_out && out.exit_code.is_none(), "{out:?}");
        let loud = tool(&["head", "-c", "200000", "/dev/zero"]);
        let out = loud.run(&loud.argv(&json!({})).unwrap(), dir.path()).await.unwrap();
        assert!(out.stdout.ends_with("(cut at 65536 bytes)"), "{}", out.stdout.len());
        let missing = tool(&["/nonexistent/tool"]);
        assert!(missing
            .run(&missing.argv(&json!({})).unwrap(), dir.path())
            .await
            .unwrap_err()
            .contains("could not be started"));
    }
}
