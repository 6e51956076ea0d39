//! The `gatehouse` command: the command-line face of the Gatehouse engine.
//! This file holds the argument definitions and the dispatch; each command
//! lives in its own module. Exit codes: 0 success, 1 a verification that
//! found problems, 2 a usage mistake (clap's convention), 3 any other error;
//! `ask` has its own (see [`ask`]).
//!
//! Commands work on the database directly (`demo --no-serve`, `audit`,
//! `export`, `token`...) or talk to a running server (`ask`, `gates`,
//! `runs`, `mcp`): deciding a gate must wake the agent waiting on it, which
//! only the server can do. `serve` and `demo` run that server.

mod alert_flags;
mod ask;
mod audit;
mod client;
mod commands;
mod demo;
mod duration;
mod gates;
mod listing;
mod mcp;
mod memory;
mod out;
mod runs;
mod runs_restart;
mod runs_steer;
mod runs_sub_team;
mod runs_team;
mod serve;
mod signin_link;
mod table;
mod team_import;
mod tokens;

use std::io::ErrorKind;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand};
use gatehouse_engine::event::AuditKey;
use gatehouse_engine::{Database, Engine, EngineConfig, PgOptions};

/// Gatehouse: a reviewer's desk for AI agents. Serve the API, ask a person from a script, decide
/// gates, and inspect, verify and move the database of runs, gates and decisions.
///
/// Exit codes: 0 success, 1 audit verification found problems, 2 usage error, 3 any other error
/// (`ask`: 0 approved, 1 rejected, 2 timed out, 3 error).
/// Set GATEHOUSE_LOG (e.g. `debug`) for diagnostic logs on stderr.
#[derive(Debug, Parser)]
#[command(name = "gatehouse", version)]
struct Cli {
    /// The database file; created and migrated on first use.
    /// [default: <data dir>/gatehouse/gatehouse.db]
    #[arg(long, global = true, env = "GATEHOUSE_DB", value_name = "PATH")]
    db: Option<PathBuf>,

    /// A PostgreSQL database shared by a team's server instances, instead of a SQLite file:
    /// postgres://USER:PASSWORD@HOST:PORT/DATABASE. The admin token file is then
    /// <data dir>/gatehouse/admin-token.
    #[arg(long, global = true, env = "GATEHOUSE_DATABASE", value_name = "URL", conflicts_with = "db")]
    database: Option<String>,

    /// The PostgreSQL schema holding Gatehouse's tables (created if missing) [default: the
    /// connection's, usually public]. Instances share data only within one schema.
    #[arg(long, global = true, env = "GATEHOUSE_DATABASE_SCHEMA", value_name = "NAME", requires = "database")]
    database_schema: Option<String>,

    /// PostgreSQL writer connections per instance, each committing its own groups of writes
    /// (writes on different runs do not wait for each other). More help only while the
    /// database has cores to spare. [default: 2]
    #[arg(long, global = true, env = "GATEHOUSE_DATABASE_WRITERS", value_name = "N", requires = "database",
          value_parser = clap::value_parser!(u16).range(1..=64))]
    database_writers: Option<u16>,

    /// The secret that keys the audit log's hash chain, kept outside the database (a team
    /// server's; or set GATEHOUSE_AUDIT_KEY to the key itself). [default: the `audit-key` file
    /// beside the admin token, which `serve` creates readable only by you]
    #[arg(long, global = true, env = "GATEHOUSE_AUDIT_KEY_FILE", value_name = "PATH")]
    audit_key_file: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the HTTP API (REST, SSE, long polls) until Ctrl-C; creates an admin token on first start.
    Serve(serve::ServeArgs),
    /// Ask a person and wait for the decision: exit 0 approved, 1 rejected, 2 timed out, 3 error.
    Ask(ask::AskArgs),
    /// Serve the MCP tools (approval, ask_human, permission prompts, the plan...) on stdio for an
    /// AI assistant, talking to a running server; needs an agent token (--token or GATEHOUSE_TOKEN).
    Mcp(mcp::McpArgs),
    /// List, show and decide gates on a running server.
    Gates {
        #[command(flatten)]
        client: client::ClientArgs,
        #[command(subcommand)]
        command: gates::GatesCommand,
    },
    /// List, show, pause, resume, steer and cancel runs on a running server.
    Runs {
        #[command(flatten)]
        client: client::ClientArgs,
        #[command(subcommand)]
        command: runs::RunsCommand,
    },
    /// Tend the team agents' memory on a running server: delete a key (reviewers).
    Memory {
        #[command(flatten)]
        client: client::ClientArgs,
        #[command(subcommand)]
        command: memory::MemoryCommand,
    },
    /// Print a one-time link that signs the reviewer UI in (asks the running server; needs an
    /// admin token, by default the admin-token file beside the database).
    SigninLink {
        #[command(flatten)]
        client: client::ClientArgs,
        /// The reviewer the link signs in as. [default: $USER]
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
    },
    /// Teams of agents: bring one over from LangChain, AutoGen or CrewAI.
    Team {
        #[command(subcommand)]
        command: team_import::TeamCommand,
    },
    /// Create, list and revoke API tokens (on the database directly).
    Token {
        #[command(subcommand)]
        command: tokens::TokenCommand,
    },
    /// Serve with a simulated fleet of agents at work (fill the database and exit with --no-serve).
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
    /// Print a recording's events in order and the state they lead to; with --live, play it on a
    /// running server instead, into a replay's event stream the Runs view shows (needs a reviewer token).
    Replay {
        /// The recording file.
        file: PathBuf,
        /// Send it to the running server (--url) to play live, its gaps divided by --speed.
        #[arg(long)]
        live: bool,
        /// How many times faster than it happened (with --live; above 0, at most 1000).
        #[arg(long, default_value_t = 1.0, requires = "live", value_name = "X")]
        speed: f64,
        #[command(flatten)]
        client: client::ClientArgs,
    },
    /// Expire gates whose deadline has passed.
    Sweep,
    /// Remove old finished runs.
    Retention {
        #[command(subcommand)]
        command: RetentionCommand,
    },
    /// Print the HTTP API's OpenAPI document (JSON), as `GET /api/hitl/openapi.json` serves it;
    /// the UI's `npm run fetch:api` and the test command's freshness check read it from here.
    #[command(hide = true)]
    Openapi,
}

#[derive(Debug, Subcommand)]
enum AuditCommand {
    /// Verify every event's hash, the chain (keyed, with the audit key) and every stored run,
    /// gate, decision, plan, context key, allow-rule and token against the log; exits 1 if
    /// anything is wrong.
    Verify {
        /// A head printed earlier by `gatehouse audit anchor` (SEQ:HASH): the log must still hold
        /// that event with that hash, so nothing up to it was truncated or rewritten.
        #[arg(long, value_name = "SEQ:HASH")]
        anchor: Option<gatehouse_engine::event::AuditAnchor>,
    },
    /// Print the log's head (SEQ:HASH) to keep elsewhere, for `audit verify --anchor`.
    Anchor,
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
    // A server says what it is doing; the other commands speak only when something is wrong.
    let serving = match &cli.command {
        Command::Serve(_) => true,
        Command::Demo(args) => !args.no_serve,
        _ => false,
    };
    init_tracing(if serving { "info" } else { "warn" });
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
fn init_tracing(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("GATEHOUSE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
}

fn dispatch(cli: Cli) -> Result<ExitCode> {
    // Opened per command, so `replay` (which reads only its file) never creates a database.
    let target = Target::new(cli.db, cli.database, cli.database_schema)?.with_writers(cli.database_writers);
    let db = target.token_base.clone();
    let key_file = cli.audit_key_file;
    // Every command that writes chains with the key; `serve` makes one on first start.
    let open_keyed = |create: bool| -> Result<(PathBuf, Engine)> {
        let key = audit::load_key(key_file.as_deref(), &target.token_base, create)?;
        let keyless = key.is_none();
        let engine = target.open(key)?;
        if keyless && engine.audit_head_is_keyed().unwrap_or(false) {
            audit::warn_keyless();
        }
        Ok((target.token_base.clone(), engine))
    };
    let open = || open_keyed(false);
    // The server-facing commands find their fallback token beside the database, never opening it.
    let api = |client: &client::ClientArgs| client::Api::connect(client, &db);
    match cli.command {
        Command::Replay { file, live: false, .. } => commands::replay(&file)?,
        Command::Replay { file, live: true, speed, client } => commands::replay_live(&api(&client)?, &file, speed)?,
        Command::Team { command } => team_import::run(&command)?,
        Command::Openapi => {
            let document = serde_json::to_string_pretty(&gatehouse_server::openapi())
                .context("cannot serialise the OpenAPI document")?;
            out::outln!("{document}");
        }
        Command::Serve(args) => {
            // A team's instances must share one key: on PostgreSQL it is given, never made here.
            let on_sqlite = matches!(target.database, Database::Sqlite(_));
            let (path, engine) = open_keyed(on_sqlite)?;
            if gatehouse_engine::Store::audit_key(engine.store()).is_none() {
                tracing::warn!(
                    "the audit log is not keyed: set GATEHOUSE_AUDIT_KEY (the same on every instance) or --audit-key-file"
                );
            }
            serve::serve(&engine, &path, &args)?
        }
        Command::Ask(args) => return ask::ask(&api(&args.client)?, &args),
        Command::Mcp(args) => mcp::mcp(&args)?,
        Command::Gates { client, command } => gates::run(&api(&client)?, &command)?,
        Command::Runs { client, command } => runs::run(&api(&client)?, &command)?,
        Command::Memory { client, command } => memory::run(&api(&client)?, &command)?,
        Command::SigninLink { client, name } => signin_link::signin_link(&api(&client)?, name)?,
        Command::Token { command } => tokens::run(&open()?.1, &command)?,
        Command::Demo(args) => {
            let (path, engine) = open()?;
            demo::run(&engine, &path, &args)?
        }
        Command::Audit { command: AuditCommand::Verify { anchor } } => {
            return audit::verify(&open()?.1, anchor.as_ref())
        }
        Command::Audit { command: AuditCommand::Anchor } => audit::anchor(&open()?.1)?,
        Command::Export(args) => commands::export(&open()?.1, &args)?,
        Command::Import { file } => commands::import(&open()?.1, &file)?,
        Command::Sweep => commands::sweep(&open()?.1)?,
        Command::Retention { command: RetentionCommand::Purge { older_than_days } } => {
            commands::purge(&open()?.1, older_than_days)?
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Where the data is, and the path the admin-token file sits beside.
struct Target {
    database: Database,
    schema: Option<String>,
    /// PostgreSQL writer connections, when not the default.
    writers: Option<u16>,
    /// The SQLite file, or for PostgreSQL the default file's place in the data directory.
    token_base: PathBuf,
}

impl Target {
    fn new(db: Option<PathBuf>, database: Option<String>, schema: Option<String>) -> Result<Self> {
        let Some(url) = database else {
            let path = db_path(db)?;
            return Ok(Self {
                database: Database::Sqlite(path.clone()),
                schema: None,
                writers: None,
                token_base: path,
            });
        };
        anyhow::ensure!(
            matches!(Database::parse(&url), Database::Postgres(_)),
            "--database (or GATEHOUSE_DATABASE) takes a postgres:// URL; for a SQLite file use --db PATH"
        );
        if let Some(name) = &schema {
            anyhow::ensure!(!name.trim().is_empty(), "--database-schema is empty; give a schema name");
        }
        Ok(Self { database: Database::Postgres(url), schema, writers: None, token_base: db_path(None)? })
    }

    fn with_writers(self, writers: Option<u16>) -> Self {
        Self { writers, ..self }
    }

    /// Opens (creating and migrating) the database.
    fn open(&self, audit_key: Option<AuditKey>) -> Result<Engine> {
        let config = EngineConfig {
            postgres: PgOptions {
                schema: self.schema.clone(),
                writers: self.writers.map_or(PgOptions::default().writers, usize::from),
                ..PgOptions::default()
            },
            audit_key,
            ..EngineConfig::default()
        };
        Ok(gatehouse_server::host::open_engine(&self.database, config)?)
    }
}

/// `--db`, else `GATEHOUSE_DB` (clap reads both), else the user's data directory.
fn db_path(flag: Option<PathBuf>) -> Result<PathBuf> {
    Ok(gatehouse_server::host::database_path(flag)?)
}
