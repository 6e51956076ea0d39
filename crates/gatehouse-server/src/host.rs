//! Hosting Gatehouse in a process, written once for `gatehouse serve` and
//! the desktop app: the default database (the user's data directory),
//! opening the engine with its audit key and options, and starting the
//! server on a runtime of its own. What each program adds (signals and the
//! admin token; the window's token and welcome runs) stays with it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use gatehouse_engine::{Database, Engine, EngineConfig, EngineError, SystemClock};

use crate::{RunningServer, ServerConfig};

/// Why a host could not start.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// `--db` was given empty.
    #[error("--db (or GATEHOUSE_DB) is empty; give a database file path")]
    EmptyPath,
    /// The SQLite file would not open (or migrate).
    #[error("cannot open the database at {}; check the path and its permissions, or pass --db PATH", path.display())]
    Sqlite {
        /// The file.
        path: PathBuf,
        /// The engine's account.
        #[source]
        source: EngineError,
    },
    /// The PostgreSQL database would not open; the engine's message names the server without the password.
    #[error("cannot open the PostgreSQL database given by --database (GATEHOUSE_DATABASE)")]
    Postgres(#[source] EngineError),
    /// No async runtime.
    #[error("cannot start the server's async runtime")]
    Runtime(#[source] std::io::Error),
    /// The address is taken or not this machine's.
    #[error("cannot listen on {addr}")]
    Listen {
        /// The address asked for.
        addr: SocketAddr,
        /// The system's account.
        #[source]
        source: std::io::Error,
    },
}

/// `gatehouse/gatehouse.db` in the user's data directory (made private to
/// the user), or in the working directory when there is no home: where the
/// CLI and the desktop app both keep their data unless told otherwise.
pub fn default_database() -> PathBuf {
    match dirs::data_dir() {
        Some(dir) => {
            let own = dir.join("gatehouse");
            // Gatehouse's own directory: private, even if an older version made it readable.
            if let Err(e) = gatehouse_engine::private_files::restrict_to_owner(&own) {
                tracing::warn!(dir = %own.display(), error = %e, "cannot make the data directory private");
            }
            own.join("gatehouse.db")
        }
        // No home directory (a bare container, say): the working directory is the one place left.
        None => PathBuf::from("gatehouse.db"),
    }
}

/// `--db` (or `GATEHOUSE_DB`) when given, else [`default_database`].
pub fn database_path(flag: Option<PathBuf>) -> Result<PathBuf, HostError> {
    match flag {
        Some(path) if path.as_os_str().is_empty() => Err(HostError::EmptyPath),
        Some(path) => Ok(path),
        None => Ok(default_database()),
    }
}

/// Opens (creating and migrating) `database` with `config` (its audit key,
/// its PostgreSQL options) on the system clock.
pub fn open_engine(database: &Database, config: EngineConfig) -> Result<Engine, HostError> {
    if let Database::Sqlite(path) = database {
        tracing::debug!(db = %path.display(), "opening the database");
    }
    Engine::open_database(database, config, Arc::new(SystemClock)).map_err(|source| match database {
        Database::Sqlite(path) => HostError::Sqlite { path: path.clone(), source },
        Database::Postgres(_) => HostError::Postgres(source),
    })
}

/// An engine and its server, on a runtime of their own.
pub struct Host {
    /// The engine the server runs on.
    pub engine: Engine,
    /// The running server (its address, its state).
    pub server: RunningServer,
    runtime: tokio::runtime::Runtime,
}

impl Host {
    /// Opens `database` with `engine` and starts the server with `server`
    /// on a runtime of `worker_threads` threads (default: one per core).
    pub fn open(
        database: &Database,
        engine: EngineConfig,
        server: ServerConfig,
        worker_threads: Option<usize>,
    ) -> Result<Self, HostError> {
        Self::start(open_engine(database, engine)?, server, worker_threads)
    }

    /// Starts the server on an engine already open.
    pub fn start(engine: Engine, config: ServerConfig, worker_threads: Option<usize>) -> Result<Self, HostError> {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.enable_all().thread_name("gatehouse-server");
        if let Some(threads) = worker_threads {
            builder.worker_threads(threads);
        }
        let runtime = builder.build().map_err(HostError::Runtime)?;
        let addr = config.bind;
        let server = runtime
            .block_on(crate::start(engine.clone(), config))
            .map_err(|source| HostError::Listen { addr, source })?;
        Ok(Self { engine, server, runtime })
    }

    /// The runtime the server runs on, for work beside it.
    pub fn runtime(&self) -> &tokio::runtime::Runtime {
        &self.runtime
    }

    /// Stops the server, giving requests in flight (long polls) up to `grace` to end.
    pub fn stop(self, grace: Duration) {
        self.server.abort();
        self.runtime.shutdown_timeout(grace);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_database_flag_is_refused_and_a_given_one_kept() {
        assert!(matches!(database_path(Some(PathBuf::new())), Err(HostError::EmptyPath)));
        assert_eq!(database_path(Some("x.db".into())).unwrap(), PathBuf::from("x.db"));
        assert!(database_path(None).unwrap().ends_with("gatehouse.db"));
    }

    #[test]
    fn a_host_serves_its_engine_until_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let config = ServerConfig { bind: "127.0.0.1:0".parse().unwrap(), ..ServerConfig::default() };
        let host =
            Host::open(&Database::Sqlite(dir.path().join("g.db")), EngineConfig::default(), config, Some(1)).unwrap();
        let addr = host.server.addr;
        assert_ne!(addr.port(), 0);
        assert!(std::net::TcpStream::connect(addr).is_ok(), "it listens");
        let taken = ServerConfig { bind: addr, ..ServerConfig::default() };
        let again = Host::start(host.engine.clone(), taken, Some(1));
        assert!(matches!(again, Err(HostError::Listen { addr: a, .. }) if a == addr), "the port is taken");
        host.stop(Duration::from_secs(1));
        assert!(std::net::TcpStream::connect(addr).is_err(), "it stopped listening");
    }
}
