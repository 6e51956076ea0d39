//! `gatehouse serve`: the HTTP API over the database until Ctrl-C or
//! SIGTERM. On its first start it creates an admin token and writes the
//! secret, readable only by this user, to `admin-token` beside the database
//! (it never prints the secret). `gatehouse demo` serves the same way, with
//! its simulated fleet working beside the server on the same engine.

use std::fs::OpenOptions;
use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use gatehouse_engine::{Engine, TokenRole};
use gatehouse_server::{ProviderRegistry, ServerConfig};

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
    /// Also accept requests for this host name (repeatable); loopback and the bound address always work.
    #[arg(long = "allowed-host", value_name = "NAME")]
    pub allowed_hosts: Vec<String>,
    /// The base URL that webhooks and event links point at. [default: http://ADDR]
    #[arg(long, value_name = "URL")]
    pub public_url: Option<String>,
    /// POST each new sync gate to this URL.
    #[arg(long, env = "GATEHOUSE_WEBHOOK_URL", value_name = "URL")]
    pub webhook_url: Option<String>,
}

/// What a task running beside the server is given.
pub struct Live<'a> {
    /// Set once the server is shutting down: the task should return soon.
    pub stop: &'a AtomicBool,
    /// Where the server listens, `http://ADDR`.
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
    let config = ServerConfig {
        bind: args.bind,
        body_limit: usize::try_from(args.body_limit).context("--body-limit is larger than this machine can hold")?,
        webhook_url: args.webhook_url.clone().filter(|u| !u.trim().is_empty()),
        allowed_hosts: args.allowed_hosts.clone(),
        public_url: args.public_url.clone(),
        ui_dir: None,
        providers: ProviderRegistry::from_env()
            .context("the model provider configuration (GATEHOUSE_*_ environment variables)")?,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("gatehouse-server")
        .build()
        .context("cannot start the server's async runtime")?;
    let server = runtime.block_on(gatehouse_server::start(engine.clone(), config)).with_context(|| {
        format!(
            "cannot listen on {}; if another Gatehouse (or anything else) uses that port, stop it or pass \
             --bind 127.0.0.1:PORT (port 0 picks a free one)",
            args.bind
        )
    })?;
    // Listen for Ctrl-C and SIGTERM before saying where we listen: whoever reads that line may
    // stop us at once, and must find the clean shutdown, not the default of dying on the spot.
    let signals = {
        let _context = runtime.enter();
        Signals::listen()?
    };
    // Bound first, so a busy port fails before any token is made; nobody can call in without one.
    announce_admin_token(engine, db)?;
    let url = format!("http://{}", server.addr);
    outln!("Gatehouse listening on {url}");
    tracing::info!(%url, db = %db.display(), "serving; Ctrl-C or SIGTERM stops");

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
    runtime.shutdown_timeout(Duration::from_secs(5));
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
        if let Err(e) = write_secret(&path, &secret) {
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

/// Writes `secret` to `path` with mode 0600 (tightening an existing file first).
fn write_secret(path: &Path, secret: &str) -> std::io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    file.write_all(format!("{secret}\n").as_bytes())?;
    file.sync_all()
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
