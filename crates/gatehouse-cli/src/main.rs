//! The `gatehouse` command: the command-line face of the Gatehouse engine.
//! This file holds the argument definitions and the dispatch; each command
//! lives in its own module. Exit codes: 0 success, 1 a verification that
//! found problems, 2 a usage mistake (clap's convention), 3 any other error.
//!
//! The server-facing commands (`serve`, `ask`, `token`) join the
//! [`Command`] enum when the HTTP server lands; everything they need from
//! here (the database path, opening the engine, error reporting) is shared.

mod commands;
mod demo;
mod listing;
mod out;
mod table;

use std::io::ErrorKind;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};
use gatehouse_engine::{Engine, EngineConfig, GateKind, GateStatus, RunStatus};

/// Gatehouse: a reviewer's desk for AI agents. Inspect, verify and move
/// the database of runs, gates and decisions, or fill it with a demo.
///
/// Exit codes: 0 success, 1 audit verification found problems, 2 usage error, 3 any other error.
/// Set GATEHOUSE_LOG (e.g. `debug`) for diagnostic logs on stderr.
#[derive(Debug, Parser)]
#[command(name = "gatehouse", version)]
struct Cli {
    /// The database file; created and migrated on first use.
    /// [default: <data dir>/gatehouse/gatehouse.db]
    #[arg(long, global = true, env = "GATEHOUSE_DB", value_name = "PATH")]
    db: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Fill the database with a realistic simulated workload and print a summary.
    Demo(demo::DemoArgs),
    /// Check the hash-chained audit log.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
    /// Write a recording (JSON) of a run, a session or everything.
    Export(commands::ExportArgs),
    /// Import a recording written by `gatehouse export`.
    Import {
        /// The recording file.
        file: PathBuf,
    },
    /// Print a recording's events in order and the state they lead to.
    Replay {
        /// The recording file.
        file: PathBuf,
    },
    /// Expire gates whose deadline has passed.
    Sweep,
    /// Remove old finished runs.
    Retention {
        #[command(subcommand)]
        command: RetentionCommand,
    },
    /// List runs.
    Runs {
        #[command(subcommand)]
        command: RunsCommand,
    },
    /// List gates.
    Gates {
        #[command(subcommand)]
        command: GatesCommand,
    },
}

#[derive(Debug, Subcommand)]
enum AuditCommand {
    /// Verify every event's hash, the chain and the logged decisions; exits 1 if anything is wrong.
    Verify,
}

#[derive(Debug, Subcommand)]
enum RetentionCommand {
    /// Purge completed, failed and cancelled runs last changed more than N days ago.
    Purge {
        /// Age in days; 0 purges every finished run.
        #[arg(long, value_name = "N")]
        older_than_days: u32,
    },
}

#[derive(Debug, Subcommand)]
enum RunsCommand {
    /// Newest runs first.
    List(RunsListArgs),
}

#[derive(Debug, Subcommand)]
enum GatesCommand {
    /// Pending gates in the reviewer's order (sync first, then priority, then age); others newest first.
    List(GatesListArgs),
}

/// Filters for `runs list`.
#[derive(Debug, Args)]
pub struct RunsListArgs {
    /// Only runs in this status.
    #[arg(long, value_parser = enum_parser(RunStatus::ALL, RunStatus::as_str))]
    pub status: Option<RunStatus>,
    /// At most this many.
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
}

/// Filters for `gates list`.
#[derive(Debug, Args)]
pub struct GatesListArgs {
    /// Only gates in this status.
    #[arg(long, value_parser = enum_parser(GateStatus::ALL, GateStatus::as_str))]
    pub status: Option<GateStatus>,
    /// Only gates of this kind.
    #[arg(long, value_parser = enum_parser(GateKind::ALL, GateKind::as_str))]
    pub kind: Option<GateKind>,
    /// At most this many.
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
}

/// A clap parser accepting exactly the snake_case names of `all`, so
/// `--help` and error messages list the possible values.
fn enum_parser<T: Copy + Send + Sync + 'static, const N: usize>(
    all: [T; N],
    name: fn(T) -> &'static str,
) -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(all.map(name))
        .try_map(move |s: String| all.into_iter().find(|v| name(*v) == s).ok_or_else(|| format!("unknown value `{s}`")))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing();
    match dispatch(cli) {
        Ok(code) => code,
        // The reader of our stdout went away (`gatehouse export --all | head`): not an error.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(3)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == ErrorKind::BrokenPipe))
}

/// Logs go to stderr so they never mix with exported JSON on stdout.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("GATEHOUSE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
}

fn dispatch(cli: Cli) -> Result<ExitCode> {
    // Opened per command, so `replay` (which reads only its file) never creates a database.
    let db = cli.db;
    let open = || -> Result<(PathBuf, Engine)> {
        let path = db_path(db.clone())?;
        let engine = open_engine(&path)?;
        Ok((path, engine))
    };
    match cli.command {
        Command::Replay { file } => commands::replay(&file)?,
        Command::Demo(args) => {
            let (path, engine) = open()?;
            demo::run(&engine, &path, &args)?
        }
        Command::Audit { command: AuditCommand::Verify } => return commands::audit_verify(&open()?.1),
        Command::Export(args) => commands::export(&open()?.1, &args)?,
        Command::Import { file } => commands::import(&open()?.1, &file)?,
        Command::Sweep => commands::sweep(&open()?.1)?,
        Command::Retention { command: RetentionCommand::Purge { older_than_days } } => {
            commands::purge(&open()?.1, older_than_days)?
        }
        Command::Runs { command: RunsCommand::List(args) } => listing::runs(&open()?.1, &args)?,
        Command::Gates { command: GatesCommand::List(args) } => listing::gates(&open()?.1, &args)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `--db`, else `GATEHOUSE_DB` (clap reads both), else the user's data directory.
fn db_path(flag: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(path) = flag {
        anyhow::ensure!(!path.as_os_str().is_empty(), "--db (or GATEHOUSE_DB) is empty; give a database file path");
        return Ok(path);
    }
    Ok(match dirs::data_dir() {
        Some(dir) => dir.join("gatehouse").join("gatehouse.db"),
        // No home directory (a bare container, say): the working directory is the one place left.
        None => PathBuf::from("gatehouse.db"),
    })
}

/// Opens (creating and migrating) the database.
fn open_engine(path: &std::path::Path) -> Result<Engine> {
    tracing::debug!(db = %path.display(), "opening the database");
    Engine::open(path, EngineConfig::default()).with_context(|| {
        format!("cannot open the database at {}; check the path and its permissions, or pass --db PATH", path.display())
    })
}
