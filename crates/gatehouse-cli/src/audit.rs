//! The audit commands and the audit key. `audit verify` checks the log and
//! every stored row against it (and an anchor, if given); `audit anchor`
//! prints the head to keep elsewhere. The key that chains the log comes
//! from `--audit-key-file`, else `GATEHOUSE_AUDIT_KEY`, else the
//! `audit-key` file beside the admin token, which `serve` creates (0600).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use gatehouse_engine::event::{AuditAnchor, AuditKey};
use gatehouse_engine::{private_files, Engine};

use crate::client::admin_token_path;
use crate::out::outln;

/// The key file's name beside the admin token.
pub const AUDIT_KEY_FILE: &str = "audit-key";

/// The environment variable holding the key itself (a team server's).
pub const AUDIT_KEY_ENV: &str = "GATEHOUSE_AUDIT_KEY";

/// Where `serve` keeps the key it makes: beside the admin token.
pub fn default_key_path(db: &Path) -> PathBuf {
    admin_token_path(db).with_file_name(AUDIT_KEY_FILE)
}

/// The audit key: `file` (`--audit-key-file`), else `GATEHOUSE_AUDIT_KEY`,
/// else the default file beside the admin token. When none exists and
/// `create` is set (`serve`), a new key is written to the default file,
/// readable only by this user; otherwise the log is read and written
/// without a key.
pub fn load_key(file: Option<&Path>, db: &Path, create: bool) -> Result<Option<AuditKey>> {
    if let Some(file) = file {
        return read_key(file).map(Some);
    }
    if let Ok(text) = std::env::var(AUDIT_KEY_ENV) {
        return AuditKey::from_text(&text).map(Some).map_err(|e| anyhow::anyhow!("{AUDIT_KEY_ENV}: {e}"));
    }
    let path = default_key_path(db);
    if path.exists() {
        return read_key(&path).map(Some);
    }
    if !create {
        return Ok(None);
    }
    let text = AuditKey::generate();
    private_files::write_private_file(&path, format!("{text}\n").as_bytes()).with_context(|| {
        format!("cannot write the audit key to {}; check that directory's permissions", path.display())
    })?;
    outln!("Created an audit key and wrote it to {} (readable only by you; keep a copy elsewhere)", path.display());
    AuditKey::from_text(&text).map(Some).map_err(anyhow::Error::msg)
}

/// Says that this database's log is keyed and this command has no key.
pub fn warn_keyless() {
    eprintln!(
        "warning: this database's audit log is keyed (the desktop app keeps its key in the OS keychain), \
         but no key was given: what this command writes is chained without it, and `audit verify` with the \
         key will report it. Give the key with {AUDIT_KEY_ENV} or --audit-key-file."
    );
}

fn read_key(path: &Path) -> Result<AuditKey> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read the audit key file {}", path.display()))?;
    AuditKey::from_text(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// `audit verify`: exit 0 when the log and the rows are intact, 1 listing
/// each problem.
pub fn verify(engine: &Engine, anchor: Option<&AuditAnchor>) -> Result<ExitCode> {
    let report = engine.verify_audit_against(anchor).context("cannot read the event log to verify it")?;
    outln!("events checked:     {}", report.events);
    outln!("purged events:      {}", report.purged_events);
    outln!("decisions checked:  {}", report.decisions_checked);
    outln!("rows checked:       {}", report.rows_checked);
    outln!("head:               {}:{}", report.head_seq, report.head_hash);
    match (report.keyed, report.keyed_from) {
        (true, Some(1)) => outln!("chain:              keyed with the audit key throughout"),
        (true, Some(from)) => {
            outln!("chain:              keyed from event {from}; events before it predate the key (plain SHA-256)")
        }
        (true, None) => outln!("chain:              no event is keyed with the audit key"),
        (false, _) => outln!("chain:              checked without a key (plain SHA-256 links only)"),
    }
    if report.unchecked_links > 0 {
        outln!(
            "warning: {} keyed links were not checked; give the audit key (--audit-key-file or {AUDIT_KEY_ENV})",
            report.unchecked_links
        );
    }
    if let Some(anchor) = &report.anchor {
        outln!("anchor:             {anchor}");
    }
    if report.is_intact() {
        outln!("audit log intact");
        return Ok(ExitCode::SUCCESS);
    }
    outln!("problems ({}):", report.problems.len());
    for problem in &report.problems {
        outln!("  - {problem}");
    }
    outln!("audit log FAILED verification: the database was changed outside Gatehouse");
    Ok(ExitCode::from(1))
}

/// `audit anchor`: the head as `SEQ:HASH`, for `audit verify --anchor`.
pub fn anchor(engine: &Engine) -> Result<()> {
    let anchor = engine.audit_anchor().context("cannot read the event log's head")?;
    outln!("{anchor}");
    Ok(())
}
