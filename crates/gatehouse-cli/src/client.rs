//! Talking to a running server: the `--url` and `--token` options, finding
//! a token (the flag, `GATEHOUSE_TOKEN`, else the `admin-token` file that
//! `gatehouse serve` writes beside the database) and [`Api`], the shared
//! `gatehouse-client` driven to completion for each command (the CLI is
//! synchronous), whose failures read as the server's own message with the
//! HTTP status, or say plainly that the server cannot be reached.

use std::fmt;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};
use clap::Args;
use gatehouse_client::{ApiError, Client, ClientError, StatusCode, TransportKind};
use reqwest::{Method, RequestBuilder, Url};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Where `gatehouse serve` listens unless told otherwise.
pub const DEFAULT_URL: &str = "http://127.0.0.1:7777";
/// The file beside the database holding the admin token `gatehouse serve` created.
pub const ADMIN_TOKEN_FILE: &str = "admin-token";

/// How to reach the server; shared by every command that talks to one.
#[derive(Debug, Clone, Args)]
pub struct ClientArgs {
    /// The Gatehouse server to talk to.
    #[arg(long, global = true, env = "GATEHOUSE_URL", default_value = DEFAULT_URL, value_name = "URL")]
    pub url: String,
    /// API token sent as `Authorization: Bearer`. [default: the admin-token file beside the
    /// database, written by `gatehouse serve` on its first start]
    #[arg(long, global = true, env = "GATEHOUSE_TOKEN", hide_env_values = true, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Also trust the certificate authorities in this PEM file for an https:// server (a team
    /// server whose certificate a private CA signed), beside the built-in ones.
    #[arg(long, global = true, env = "GATEHOUSE_CA_CERT", value_name = "PEM")]
    pub ca_cert: Option<PathBuf>,
}

/// The certificate authorities in the PEM file at `path` (`--ca-cert`).
pub fn ca_certificates(path: Option<&Path>) -> Result<Vec<reqwest::Certificate>> {
    let Some(path) = path else { return Ok(Vec::new()) };
    let pem = std::fs::read(path).with_context(|| format!("cannot read --ca-cert {}", path.display()))?;
    let roots = reqwest::Certificate::from_pem_bundle(&pem)
        .with_context(|| format!("--ca-cert {} is not a PEM certificate file", path.display()))?;
    ensure!(!roots.is_empty(), "--ca-cert {} holds no PEM certificate", path.display());
    Ok(roots)
}

/// The admin-token file beside the database at `db`.
pub fn admin_token_path(db: &Path) -> PathBuf {
    match db.parent() {
        Some(dir) => dir.join(ADMIN_TOKEN_FILE),
        None => PathBuf::from(ADMIN_TOKEN_FILE),
    }
}

/// An error answer from the server, as people read it: the server's
/// message and the HTTP status, with what to do about a refused token.
#[derive(Debug)]
pub struct ApiFailure(pub ApiError);

impl fmt::Display for ApiFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        if self.0.status == StatusCode::UNAUTHORIZED {
            write!(f, "; pass a live token with --token or GATEHOUSE_TOKEN (`gatehouse token create` makes one)")?;
        }
        Ok(())
    }
}

impl std::error::Error for ApiFailure {}

/// Whether `e` is a failure to reach the server or hear its answer (worth
/// retrying), rather than an answer the server gave.
pub fn is_transport(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<reqwest::Error>())
}

/// A client for one server and one token.
pub struct Api {
    client: Client,
    runtime: tokio::runtime::Runtime,
}

impl Api {
    /// A client for `args`, finding the token as described on [`ClientArgs`]; `db` is
    /// the database whose `admin-token` file is the fallback.
    pub fn connect(args: &ClientArgs, db: &Path) -> Result<Self> {
        let base = parse_url(&args.url)?;
        let token = match args.token.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            Some(token) => token.to_owned(),
            None => read_token_file(db)?,
        };
        let roots = ca_certificates(args.ca_cert.as_deref())?;
        let agent = concat!("gatehouse-cli/", env!("CARGO_PKG_VERSION"));
        let client = Client::new(base, token, agent, roots).context("cannot set up the HTTP client")?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the HTTP client's runtime")?;
        Ok(Self { client, runtime })
    }

    /// The server's base URL, for messages.
    pub fn server(&self) -> &str {
        self.client.server()
    }

    /// A request to `/api/hitl/<segments...>` (each segment percent-encoded), carrying the token.
    pub fn request(&self, method: Method, segments: &[&str]) -> RequestBuilder {
        self.client.request(method, segments)
    }

    /// GETs `segments` and parses the answer.
    pub fn get<T: DeserializeOwned>(&self, segments: &[&str]) -> Result<T> {
        self.send(self.request(Method::GET, segments))
    }

    /// POSTs `body` as JSON to `segments` and parses the answer.
    pub fn post<T: DeserializeOwned>(&self, segments: &[&str], body: &impl Serialize) -> Result<T> {
        self.send(self.request(Method::POST, segments).json(body))
    }

    /// Sends a request; a non-2xx answer becomes an [`ApiFailure`].
    pub fn send<T: DeserializeOwned>(&self, request: RequestBuilder) -> Result<T> {
        self.runtime.block_on(self.client.send(request)).map_err(|e| self.explain(e))
    }

    /// What a failed call means for the person at the terminal, and what to do.
    fn explain(&self, e: ClientError) -> anyhow::Error {
        let server = self.server();
        match e {
            ClientError::Api(e) => ApiFailure(e).into(),
            ClientError::Transport(t) => {
                let what = match t.kind() {
                    TransportKind::Timeout => {
                        format!("the Gatehouse server at {server} did not answer in time; is it overloaded or stuck?")
                    }
                    TransportKind::Certificate => format!(
                        "the Gatehouse server at {server} showed a certificate this computer does not trust; if a \
                         private CA signed it, pass that CA with --ca-cert PEM (or GATEHOUSE_CA_CERT)"
                    ),
                    TransportKind::Connect => format!(
                        "cannot reach the Gatehouse server at {server}; start it with `gatehouse serve`, or point \
                         --url (or GATEHOUSE_URL) at a running one"
                    ),
                    TransportKind::Other => format!("the exchange with the Gatehouse server at {server} failed"),
                };
                anyhow::Error::new(t.source).context(what)
            }
            ClientError::Unreadable { status, source, .. } => anyhow::Error::new(source).context(format!(
                "the server at {server} answered (HTTP {status}) in a shape this gatehouse does not understand; \
                 are the server and this command the same version?"
            )),
            other => anyhow::Error::new(other),
        }
    }
}

/// `--url`, with `http://` assumed when no scheme is given.
pub fn parse_url(raw: &str) -> Result<Url> {
    let raw = raw.trim();
    let full = if raw.contains("://") { raw.to_owned() } else { format!("http://{raw}") };
    let mut url =
        Url::parse(&full).with_context(|| format!("--url `{raw}` is not a URL; give one like {DEFAULT_URL}"))?;
    ensure!(
        matches!(url.scheme(), "http" | "https"),
        "--url `{raw}` must be an http:// or https:// URL, like {DEFAULT_URL}"
    );
    url.set_query(None);
    url.set_fragment(None);
    Ok(url)
}

fn read_token_file(db: &Path) -> Result<String> {
    let path = admin_token_path(db);
    match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => Ok(text.trim().to_owned()),
        Ok(_) => bail!("the token file {} is empty; {}", path.display(), how_to_get_a_token(&path)),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            bail!("no API token given and no {} found; {}", path.display(), how_to_get_a_token(&path))
        }
        Err(e) => Err(e).with_context(|| format!("cannot read the token file {}", path.display())),
    }
}

fn how_to_get_a_token(path: &Path) -> String {
    format!(
        "pass --token TOKEN or set GATEHOUSE_TOKEN. `gatehouse serve` writes an admin token to {} on its first \
         start (give this command the same --db as the server), and `gatehouse token create --role reviewer \
         --name NAME --db <the server's database>` makes another",
        path.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_get_a_scheme_and_lose_query_and_fragment() {
        assert_eq!(parse_url("127.0.0.1:7777").unwrap().as_str(), "http://127.0.0.1:7777/");
        assert_eq!(parse_url("https://gh.example/x?y=1#z").unwrap().as_str(), "https://gh.example/x");
        assert!(parse_url("ftp://example.com").is_err());
        assert!(parse_url("http://").is_err());
    }

    #[test]
    fn error_bodies_become_the_servers_message_with_the_status() {
        let failure = |status, body| ApiFailure(ApiError::from_answer(status, body));
        let e = failure(StatusCode::FORBIDDEN, r#"{"code":"forbidden","message":"`bot` has an agent token"}"#);
        assert_eq!(e.to_string(), "`bot` has an agent token (HTTP 403 Forbidden)");
        let e = failure(StatusCode::NOT_FOUND, "");
        assert!(e.to_string().contains("does not offer this endpoint"), "{e}");
        let e = failure(StatusCode::UNAUTHORIZED, r#"{"code":"unauthorized","message":"unknown or revoked token"}"#);
        assert!(e.to_string().ends_with("(`gatehouse token create` makes one)"), "{e}");
    }

    #[test]
    fn the_token_file_sits_beside_the_database() {
        assert_eq!(admin_token_path(Path::new("/data/g.db")), Path::new("/data/admin-token"));
        assert_eq!(admin_token_path(Path::new("g.db")), Path::new("admin-token"));
    }
}
