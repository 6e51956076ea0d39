//! `gatehouse serve`: the HTTP API over the database until Ctrl-C or
//! SIGTERM. On its first start it creates an admin token and writes the
//! secret, readable only by this user, to `admin-token` beside the database
//! (it never prints the secret), and prints a one-time sign-in link for the
//! reviewer UI (`ORIGIN/#signin=CODE`, see the server's `routes/signin.rs`).
//! `gatehouse demo` serves the same way, with
//! its simulated fleet working beside the server on the same engine. With
//! `--tls-cert` and `--tls-key` it serves HTTPS only.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use gatehouse_engine::{private_files, Engine, TokenRole};
use gatehouse_server::abandoned;
use gatehouse_server::host::{Host, HostError};
use gatehouse_server::team_tools::TeamTools;
use gatehouse_server::{ConnectionLimits, ProviderRegistry, ServerConfig, TlsConfig};

use crate::client::admin_token_path;
use crate::out::outln;

/// How the server listens; shared by `serve` and `demo`.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on; port 0 picks a free port (the listening line names it).
    #[arg(long, default_value = "127.0.0.1:7777", value_name = "ADDR", value_parser = parse_bind)]
    pub bind: SocketAddr,
    /// Largest accepted request body, in bytes.
    #[arg(long, default_value_t = 1024 * 1024, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub body_limit: u64,
    /// Also accept requests for this host name (repeatable); loopback, the bound address and the public URL's
    /// host always work.
    #[arg(long = "allowed-host", value_name = "NAME")]
    pub allowed_hosts: Vec<String>,
    /// The base URL the server is reached at (behind a proxy or a DNS name): webhooks and event links point
    /// at it, its host is accepted and browsers may call from its origin. [default: http://ADDR, or
    /// https://ADDR with --tls-cert]
    #[arg(long, value_name = "URL", value_parser = parse_public_url)]
    pub public_url: Option<String>,
    /// Also accept browser requests from this origin (repeatable), e.g. https://ui.example.com; the server's
    /// own origin and the public URL's always work.
    #[arg(long = "allowed-origin", value_name = "ORIGIN", value_parser = parse_origin)]
    pub allowed_origins: Vec<String>,
    /// Serve HTTPS only (HTTP/1.1 and HTTP/2) with this PEM certificate chain, the server's certificate
    /// first; needs --tls-key.
    #[arg(long, value_name = "PEM_FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert (PKCS#8, PKCS#1 or SEC1, unencrypted).
    #[arg(long, value_name = "PEM_FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Connections served at once; past them a client gets an immediate 503 (lowered at start to what the
    /// open-file limit allows).
    #[arg(long, default_value_t = 4096, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
    /// Seconds a client has to send a request's headers (and to finish a TLS handshake), from connecting or
    /// from its previous response; an idle HTTP/1.1 connection is closed after it.
    #[arg(long, default_value_t = ConnectionLimits::default().header_read_timeout.as_secs(), value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_read_timeout: u64,
    /// Seconds a connection with no request in flight stays open.
    #[arg(long, default_value_t = ConnectionLimits::default().idle_timeout.as_secs(), value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub idle_timeout: u64,
    /// Purge ended runs older than this many days, at start and then daily (never a run with pending
    /// gates; each purge is recorded in the audit log). Without it, everything is kept.
    #[arg(long, value_name = "DAYS", value_parser = clap::value_parser!(u32).range(1..=36500))]
    pub retention_days: Option<u32>,
    /// POST each new sync gate to this URL (http or https). `BLOCKER_WEBHOOK_URL`, the name the blocker
    /// service used, is read too when neither this flag nor `GATEHOUSE_WEBHOOK_URL` is given.
    #[arg(long, env = "GATEHOUSE_WEBHOOK_URL", value_name = "URL", value_parser = parse_webhook_url)]
    pub webhook_url: Option<String>,
    /// The review people set for agents: a JSON file with a `default` floor and floors per agent name
    /// (`agents`) and token team (`teams`), each a `hitl_config` (the run policy an agent's runs get, and the
    /// weakest it may ask for), `timeout_may_approve` and `auto_approve_threshold`. Without it every agent's
    /// gates wait for a person; an agent may always ask for more review, never for less.
    #[arg(long, env = "GATEHOUSE_OVERSIGHT", value_name = "FILE")]
    pub oversight: Option<PathBuf>,
    /// Let a token decide the gates it opened itself (one person using `gatehouse ask` and the UI alone).
    /// Such decisions are marked self-decided; off, a gate is decided by someone other than who asked.
    #[arg(long)]
    pub allow_self_review: bool,
    /// Also accept the token as `?access_token=` on GET /api/hitl/events, for EventSource clients that cannot
    /// send headers. Off by default: a token in a URL is kept in proxy and access logs.
    #[arg(long)]
    pub allow_query_token: bool,
    /// Serve GET /metrics (Prometheus text format) without a token, for a scraper on a trusted network. Off by
    /// default: any valid token may read it (the counts say how busy the server is, never a secret).
    #[arg(long)]
    pub metrics_public: bool,
    /// Cancel a created or active run whose agent has not been heard from (no call, no event on the run, no
    /// wait on its gates) for this long, with the reason "agent gone for ..."; its pending gates are withdrawn.
    /// A time such as 30m, 24h or 7d, or `off`. Runs waiting for a reviewer or paused are never closed.
    #[arg(long, default_value = "24h", value_name = "DURATION", value_parser = abandoned::parse_gone_after)]
    pub abandoned_run_after: abandoned::GoneAfter,
    /// Alert thresholds and SLA targets.
    #[command(flatten)]
    pub alerts: crate::alert_flags::AlertArgs,
    /// The operator's tools that team runs may grant their agents: a YAML or JSON file with `workspaces` (where
    /// each run's directory goes; default: `workspaces` beside the database), `web_search` (a SearXNG-compatible
    /// endpoint), `mcp_servers` (stdio commands or HTTP URLs, their tools offered as SERVER.TOOL) and `commands`
    /// (argv templates; every call waits for a person's approval). Checked and connected at start.
    #[arg(long, env = "GATEHOUSE_TEAM_TOOLS", value_name = "FILE")]
    pub team_tools: Option<PathBuf>,
}

/// What a task running beside the server is given.
pub struct Live<'a> {
    /// Set once the server is shutting down: the task should return soon.
    pub stop: &'a AtomicBool,
    /// Where the server listens, `http://ADDR` (`https://ADDR` with TLS).
    pub url: String,
    /// The server's orchestrator (runs Gatehouse drives itself).
    pub orchestrator: std::sync::Arc<gatehouse_orchestrator::Orchestrator>,
    /// The server's async runtime.
    pub runtime: tokio::runtime::Handle,
}

/// `serve`: serves until Ctrl-C or SIGTERM.
pub fn serve(engine: &Engine, db: &Path, args: &ServeArgs) -> Result<()> {
    serve_with(engine, db, args, |_| Ok(()))
}

/// Serves `engine` until Ctrl-C or SIGTERM while `beside` runs on a thread
/// of its own (it should return soon after [`Live::stop`] is set). An error
/// from `beside` is reported and the server keeps serving.
pub fn serve_with<F>(engine: &Engine, db: &Path, args: &ServeArgs, beside: F) -> Result<()>
where
    F: FnOnce(&Live) -> Result<()> + Send,
{
    let team_tools = TeamTools::load_if(args.team_tools.as_deref(), db)?;
    let config = ServerConfig {
        bind: args.bind,
        body_limit: usize::try_from(args.body_limit).context("--body-limit is larger than this machine can hold")?,
        webhook_url: webhook_url(args.webhook_url.clone(), std::env::var(BLOCKER_WEBHOOK_URL).ok())?,
        allowed_hosts: args.allowed_hosts.clone(),
        public_url: args.public_url.clone(),
        allowed_origins: args.allowed_origins.clone(),
        tls: match (&args.tls_cert, &args.tls_key) {
            (Some(cert), Some(key)) => Some(TlsConfig::from_pem_files(cert, key)?),
            _ => None,
        },
        ui_dir: None,
        connections: ConnectionLimits {
            max_connections: usize::try_from(args.max_connections).unwrap_or(usize::MAX),
            header_read_timeout: Duration::from_secs(args.header_read_timeout),
            idle_timeout: Duration::from_secs(args.idle_timeout),
        },
        providers: ProviderRegistry::from_env()
            .context("the model provider configuration (GATEHOUSE_*_ environment variables)")?,
        allow_query_token: args.allow_query_token,
        retention_days: args.retention_days,
        metrics_public: args.metrics_public,
        alerts: args.alerts.config(),
        oversight: match &args.oversight {
            Some(path) => read_oversight(path)?,
            None => gatehouse_engine::Oversight::default(),
        },
        allow_self_review: args.allow_self_review,
        team_tools: team_tools.as_ref().map(|t| std::sync::Arc::clone(&t.toolbox)),
    };
    let host = match Host::start(engine.clone(), config, None) {
        Ok(host) => host,
        Err(HostError::Listen { source, .. }) => {
            return Err(anyhow::Error::new(source).context(format!(
                "cannot listen on {}; if another Gatehouse (or anything else) uses that port, stop it or pass \
                 --bind 127.0.0.1:PORT (port 0 picks a free one)",
                args.bind
            )))
        }
        Err(e) => return Err(e.into()),
    };
    let (server, runtime) = (&host.server, host.runtime());
    if let abandoned::GoneAfter(Some(after)) = args.abandoned_run_after {
        runtime.spawn(abandoned::close_abandoned_runs(server.state.clone(), after));
    }
    // Listen for Ctrl-C and SIGTERM before saying where we listen: whoever reads that line may
    // stop us at once, and must find the clean shutdown, not the default of dying on the spot.
    let signals = {
        let _context = runtime.enter();
        Signals::listen()?
    };
    // Bound first, so a busy port fails before any token is made; nobody can call in without one.
    announce_admin_token(engine, db)?;
    let url = server.url();
    outln!("Gatehouse listening on {url}");
    announce_signin_link(engine, &server.state.public_url());
    tracing::info!(%url, database = %engine.store().description(), "serving; Ctrl-C or SIGTERM stops");

    let stop = AtomicBool::new(false);
    let live = Live {
        stop: &stop,
        url,
        orchestrator: std::sync::Arc::clone(&server.state.orchestrator),
        runtime: runtime.handle().clone(),
    };
    let signal = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            if let Err(e) = beside(&live) {
                eprintln!("error: {e:#}");
                eprintln!("(the server keeps serving; Ctrl-C stops it)");
            }
        });
        let signal = runtime.block_on(signals.wait());
        // Stop accepting first, then let the worker finish what it is doing.
        server.abort();
        stop.store(true, Ordering::SeqCst);
        if worker.join().is_err() {
            eprintln!("error: the task beside the server panicked");
        }
        signal
    });
    // Requests still in flight (long polls) end here; their clients retry or report it.
    host.stop(Duration::from_secs(5));
    if let Some(tools) = team_tools {
        tools.close();
    }
    signal?;
    tracing::info!("stopped; everything acknowledged is on disk");
    Ok(())
}

/// Ctrl-C (SIGINT) and SIGTERM, listened for from the moment this exists.
struct Signals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    /// Starts listening (inside the runtime's context).
    fn listen() -> Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(Self {
                interrupt: signal(SignalKind::interrupt()).context("cannot listen for Ctrl-C")?,
                terminate: signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?,
            })
        }
        #[cfg(not(unix))]
        Ok(Self {})
    }

    /// Resolves when either arrives.
    async fn wait(mut self) -> Result<()> {
        #[cfg(unix)]
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
        #[cfg(not(unix))]
        tokio::signal::ctrl_c().await.context("cannot listen for Ctrl-C")?;
        tracing::info!("shutting down");
        Ok(())
    }
}

/// Prints a one-time link that signs the reviewer UI in as this computer's
/// user (a reviewer token made when it is opened): the newcomer's first
/// minute, with no token in an address or the shell's history.
fn announce_signin_link(engine: &Engine, origin: &str) {
    let name = std::env::var("USER").ok().filter(|u| !u.trim().is_empty()).unwrap_or_else(|| "reviewer".to_owned());
    let link = gatehouse_server::routes::signin::issue_link(engine, &name);
    outln!("Open the reviewer UI (one-time sign-in link, valid 10 minutes): {}", link.url(origin));
}

/// On a database without tokens, creates the admin token and writes it
/// beside the database; otherwise says where the token file is.
fn announce_admin_token(engine: &Engine, db: &Path) -> Result<()> {
    let path = admin_token_path(db);
    let tokens = engine.tokens().context("cannot read the API tokens")?;
    if tokens.is_empty() {
        let (token, secret) = engine
            .create_token("admin", TokenRole::Admin, "gatehouse serve")
            .context("cannot create the first admin token")?;
        let replaced = path.exists();
        // On PostgreSQL the file's directory (in the data directory) may not exist yet: it is made 0700.
        if let Err(e) = private_files::write_private_file(&path, format!("{secret}\n").as_bytes()) {
            // A token nobody can read is useless; take it back so the next start tries again.
            let _ = engine.revoke_token(&token.id, "gatehouse serve");
            return Err(e).with_context(|| {
                format!("cannot write the admin token to {}; check that directory's permissions", path.display())
            });
        }
        outln!("Created an admin token and wrote it to {} (readable only by you)", path.display());
        if replaced {
            outln!("(it replaces the token that file held, which this new database does not know)");
        }
        return Ok(());
    }
    match std::fs::read_to_string(&path) {
        Ok(secret) => match engine.authenticate(secret.trim()).context("cannot check the admin token")? {
            Some(_) => outln!("Admin token: {}", path.display()),
            None => outln!(
                "The token in {} is revoked or unknown; make another with `gatehouse token create --role admin --name NAME`",
                path.display()
            ),
        },
        Err(_) => outln!(
            "No token file at {}; `gatehouse token create --role reviewer --name NAME` makes a token",
            path.display()
        ),
    }
    Ok(())
}

/// `--oversight FILE`: the review people set for agents, checked whole.
fn read_oversight(path: &Path) -> Result<gatehouse_engine::Oversight> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read --oversight {}", path.display()))?;
    let oversight: gatehouse_engine::Oversight = serde_json::from_str(&text)
        .with_context(|| format!("--oversight {} is not a valid oversight file", path.display()))?;
    oversight.validate().map_err(|e| anyhow::anyhow!("--oversight {}: {e}", path.display()))?;
    Ok(oversight)
}

/// `--webhook-url`: an http or https address with a host (empty: none).
fn parse_webhook_url(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Ok(String::new());
    }
    gatehouse_engine::policy::check_webhook_url(text).map(|()| text.trim().to_owned())
}

/// The older name of the webhook setting, from the blocker service.
const BLOCKER_WEBHOOK_URL: &str = "BLOCKER_WEBHOOK_URL";

/// The webhook: `--webhook-url` (or `GATEHOUSE_WEBHOOK_URL`) when given,
/// else `alias` (the value of `BLOCKER_WEBHOOK_URL`), checked the same way.
fn webhook_url(flag: Option<String>, alias: Option<String>) -> Result<Option<String>> {
    if let Some(url) = flag {
        return Ok(Some(url).filter(|u| !u.trim().is_empty()));
    }
    match alias.filter(|u| !u.trim().is_empty()) {
        Some(url) => parse_webhook_url(&url).map(Some).map_err(|e| anyhow::anyhow!("{BLOCKER_WEBHOOK_URL}: {e}")),
        None => Ok(None),
    }
}

/// `--public-url`: an http or https URL with a host.
fn parse_public_url(text: &str) -> Result<String, String> {
    gatehouse_server::admission::base_url(text).map(|_| text.trim().to_owned())
}

/// `--allowed-origin`: `scheme://host[:port]`, kept as browsers send it.
fn parse_origin(text: &str) -> Result<String, String> {
    gatehouse_server::admission::origin_of(text)
}

/// `--bind`: an `IP:PORT`, or a `host:port` that resolves locally.
fn parse_bind(text: &str) -> Result<SocketAddr, String> {
    let hint = "use IP:PORT such as 127.0.0.1:7777 (port 0 picks a free port)";
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    match text.to_socket_addrs() {
        Ok(mut addrs) => addrs.next().ok_or_else(|| format!("`{text}` resolves to no address; {hint}")),
        Err(_) => Err(format!("`{text}` is not an address to listen on; {hint}")),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::{webhook_url, ServeArgs};

    #[derive(Debug, Parser)]
    struct Serve {
        #[command(flatten)]
        args: ServeArgs,
    }

    fn parse(args: &[&str]) -> Result<ServeArgs, String> {
        Serve::try_parse_from(std::iter::once("serve").chain(args.iter().copied()))
            .map(|s| s.args)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn tls_needs_both_the_certificate_and_the_key() {
        let args = parse(&["--tls-cert", "cert.pem", "--tls-key", "key.pem"]).unwrap();
        assert_eq!(args.tls_cert.as_deref(), Some(std::path::Path::new("cert.pem")));
        assert_eq!(args.tls_key.as_deref(), Some(std::path::Path::new("key.pem")));
        assert!(parse(&[]).unwrap().tls_cert.is_none(), "plain HTTP by default");
        let alone = parse(&["--tls-cert", "cert.pem"]).unwrap_err();
        assert!(alone.contains("--tls-key"), "{alone}");
        let alone = parse(&["--tls-key", "key.pem"]).unwrap_err();
        assert!(alone.contains("--tls-cert"), "{alone}");
    }

    #[test]
    fn abandoned_runs_close_after_a_day_unless_told_otherwise() {
        use gatehouse_server::abandoned::GoneAfter;
        let day = std::time::Duration::from_secs(86_400);
        assert_eq!(parse(&[]).unwrap().abandoned_run_after, GoneAfter(Some(day)));
        let args = parse(&["--abandoned-run-after", "45m"]).unwrap();
        assert_eq!(args.abandoned_run_after, GoneAfter(Some(std::time::Duration::from_secs(2_700))));
        assert_eq!(parse(&["--abandoned-run-after", "off"]).unwrap().abandoned_run_after, GoneAfter(None));
        let bad = parse(&["--abandoned-run-after", "soon"]).unwrap_err();
        assert!(bad.contains("--abandoned-run-after") && bad.contains("30m, 24h or 7d"), "{bad}");
    }

    #[test]
    fn the_public_url_and_allowed_origins_must_be_http_urls() {
        let args = parse(&[
            "--public-url",
            "https://gatehouse.example.com/",
            "--allowed-origin",
            "https://UI.example.com:443",
            "--allowed-origin",
            "http://10.0.0.5:8080",
        ])
        .unwrap();
        assert_eq!(args.public_url.as_deref(), Some("https://gatehouse.example.com/"));
        assert_eq!(args.allowed_origins, ["https://ui.example.com", "http://10.0.0.5:8080"]);

        let bad = parse(&["--public-url", "gatehouse.example.com"]).unwrap_err();
        assert!(bad.contains("--public-url") && bad.contains("gatehouse.example.com"), "{bad}");
        let bad = parse(&["--allowed-origin", "https://ui.example.com/app"]).unwrap_err();
        assert!(bad.contains("--allowed-origin") && bad.contains("without a path"), "{bad}");
    }

    #[test]
    fn the_blocker_services_webhook_name_is_read_when_gatehouses_is_not_given() {
        let ours = Some("https://hooks.example.com/gatehouse".to_owned());
        let theirs = Some("https://hooks.example.com/blockers".to_owned());
        assert_eq!(webhook_url(ours.clone(), theirs.clone()).unwrap(), ours, "the flag wins");
        assert_eq!(webhook_url(None, theirs.clone()).unwrap(), theirs);
        assert_eq!(webhook_url(None, Some(" ".into())).unwrap(), None);
        assert_eq!(webhook_url(Some(String::new()), theirs).unwrap(), None, "an empty flag turns it off");
        let bad = webhook_url(None, Some("file:///etc/passwd".into())).unwrap_err().to_string();
        assert!(bad.starts_with("BLOCKER_WEBHOOK_URL: "), "{bad}");
    }

    #[test]
    fn retention_is_a_number_of_days_from_one_to_a_hundred_years() {
        assert_eq!(parse(&["--retention-days", "30"]).unwrap().retention_days, Some(30));
        assert_eq!(parse(&[]).unwrap().retention_days, None, "everything is kept by default");
        for bad in ["0", "36501", "soon"] {
            let error = parse(&["--retention-days", bad]).unwrap_err();
            assert!(error.contains("--retention-days"), "{bad}: {error}");
        }
    }
}
