//! Checking a team server before the app switches to it: its address (an
//! http or https origin, where `gatehouse serve` answers), then
//! `GET /api/hitl/whoami` with the reviewer's token. Each way this can go
//! wrong has its own code and a message saying what to do next, which the
//! connection page shows as it is.

use std::fmt;
use std::time::Duration;

use gatehouse_client::{ApiErrorCode, Client, ClientError};
use gatehouse_engine::TokenRole;
use serde::{Deserialize, Serialize};
use tauri::Url;

/// How long a check waits for the server, in all.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

/// A team server's address: its origin (scheme, host and port), since
/// `gatehouse serve` answers the UI and the API at the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamUrl(Url);

impl TeamUrl {
    /// Reads what a person typed: `https://gatehouse.example.com`, with or
    /// without a final `/`; a bare `host:port` is taken as https.
    pub fn parse(text: &str) -> Result<Self, CheckError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(CheckError::new(
                CheckCode::BadUrl,
                "Enter the team server's address, e.g. https://gatehouse.example.com.",
            ));
        }
        let with_scheme = if text.contains("://") { text.to_owned() } else { format!("https://{text}") };
        let url = Url::parse(&with_scheme).map_err(|e| {
            CheckError::new(
                CheckCode::BadUrl,
                format!("“{text}” is not an address ({e}); write it like https://gatehouse.example.com."),
            )
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(CheckError::new(
                CheckCode::BadUrl,
                format!("A team server is reached over http or https, not {}:.", url.scheme()),
            ));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(CheckError::new(CheckCode::BadUrl, format!("“{text}” names no host.")));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(CheckError::new(
                CheckCode::BadUrl,
                "Leave names and passwords out of the address; the reviewer token goes in its own field.",
            ));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(CheckError::new(
                CheckCode::BadUrl,
                format!("Give only the server's address, without the part from “?” or “#”: {}", origin_of(&url)),
            ));
        }
        if url.path() != "/" {
            return Err(CheckError::new(
                CheckCode::BadUrl,
                format!(
                    "Gatehouse answers at the root of its address; use {} without “{}”.",
                    origin_of(&url),
                    url.path()
                ),
            ));
        }
        Ok(Self(url))
    }

    /// The origin, as `https://host[:port]` (no final `/`).
    pub fn origin(&self) -> String {
        origin_of(&self.0)
    }
}

impl fmt::Display for TeamUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.origin())
    }
}

fn origin_of(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Why a check (or a switch) failed, as the connection page tells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckError {
    /// What went wrong, for the page to pick the field to fix.
    pub code: CheckCode,
    /// What to do about it, in a sentence or two.
    pub message: String,
}

/// The ways connecting can fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckCode {
    /// The address cannot be a team server's.
    BadUrl,
    /// No token was given and none is saved for this server.
    NoToken,
    /// Nothing answered at the address (refused, unknown host, TLS, timeout).
    Unreachable,
    /// Something answered, but not as Gatehouse does.
    NotGatehouse,
    /// The server does not know this token, or it was revoked.
    BadToken,
    /// The token is an agent's: it may not decide gates.
    NotReviewer,
    /// The server refused the request itself (for instance a host it does not serve).
    Refused,
    /// The OS keychain refused to keep or give the token.
    Keychain,
    /// The connection settings file could not be written.
    Settings,
    /// This computer's server did not start.
    ThisComputer,
}

impl CheckError {
    pub fn new(code: CheckCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CheckError {}

/// Who the token signs in as on the team server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reviewer {
    /// The name decisions are recorded under.
    pub name: String,
    /// reviewer or admin.
    pub role: TokenRole,
}

/// Asks the server at `url` who `token` is (through the client of our own
/// API, so its error codes are read the one way); only a reviewer or admin
/// passes.
pub async fn check(http: &reqwest::Client, url: &TeamUrl, token: &str) -> Result<Reviewer, CheckError> {
    let token = token.trim();
    if token.is_empty() {
        return Err(CheckError::new(CheckCode::NoToken, "Enter a reviewer token for this server."));
    }
    let client = Client::with_http(http.clone(), url.0.clone(), token);
    let asked = client.request(reqwest::Method::GET, &["whoami"]).timeout(CHECK_TIMEOUT);
    let reviewer: Reviewer = client.send(asked).await.map_err(|e| refusal(url, e))?;
    if reviewer.role == TokenRole::Agent {
        return Err(CheckError::new(
            CheckCode::NotReviewer,
            format!(
                "This is an agent's token (“{}”): agents may not decide gates. Use a reviewer or admin token.",
                reviewer.name
            ),
        ));
    }
    Ok(reviewer)
}

/// What a failed `whoami` means for the person connecting.
fn refusal(url: &TeamUrl, error: ClientError) -> CheckError {
    match error {
        ClientError::Api(e) if e.code == ApiErrorCode::Unauthorized => CheckError::new(
            CheckCode::BadToken,
            format!(
                "{url} does not accept this token: it is unknown there or was revoked. Ask its admin for a reviewer \
                 token (gatehouse token create --role reviewer --name YOU)."
            ),
        ),
        // Gatehouse says why in its own words (a host it does not serve, say); anything else is not Gatehouse.
        ClientError::Api(e) if e.code == ApiErrorCode::Forbidden && e.from_gatehouse => {
            CheckError::new(CheckCode::Refused, format!("{url} refused the request: {}", e.message))
        }
        ClientError::Api(e) => not_gatehouse(url, &format!("it answered {}", e.status)),
        ClientError::Unreadable { .. } => not_gatehouse(url, "its answer is not Gatehouse's"),
        ClientError::Transport(t) => unreachable(url, &t.source),
        ClientError::Setup(e) => unreachable(url, &e),
    }
}

fn not_gatehouse(url: &TeamUrl, why: &str) -> CheckError {
    CheckError::new(
        CheckCode::NotGatehouse,
        format!("{url} is not a Gatehouse server ({why}). Check the address: the one reviewers open in a browser."),
    )
}

/// The innermost cause of a failed request, which says what happened
/// ("Connection refused", "dns error", "invalid peer certificate").
fn unreachable(url: &TeamUrl, error: &reqwest::Error) -> CheckError {
    if error.is_timeout() {
        return CheckError::new(
            CheckCode::Unreachable,
            format!("{url} did not answer within {} s. Check the address and your network.", CHECK_TIMEOUT.as_secs()),
        );
    }
    let mut cause: &dyn std::error::Error = error;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    CheckError::new(
        CheckCode::Unreachable,
        format!("Cannot reach {url}: {cause}. Check the address, and that the server is running."),
    )
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use gatehouse_engine::{Engine, EngineConfig};
    use gatehouse_server::{RunningServer, ServerConfig};

    use super::*;

    #[test]
    fn an_address_is_kept_as_its_origin() {
        let url = TeamUrl::parse(" https://Gatehouse.Example.com/ ").unwrap();
        assert_eq!(url.origin(), "https://gatehouse.example.com");
        assert_eq!(TeamUrl::parse("http://127.0.0.1:7777").unwrap().origin(), "http://127.0.0.1:7777");
        assert_eq!(TeamUrl::parse("gh.example.com:8443").unwrap().origin(), "https://gh.example.com:8443");
        assert_eq!(TeamUrl::parse("https://gh.example.com:443").unwrap().origin(), "https://gh.example.com");
    }

    #[test]
    fn addresses_that_cannot_be_a_team_server_are_refused_with_the_reason() {
        for (text, says) in [
            ("", "Enter the team server's address"),
            ("ftp://example.com", "not ftp:"),
            ("https://", "not an address"),
            ("https://gh.example.com/gatehouse", "without “/gatehouse”"),
            ("https://gh.example.com/#token=abc", "without the part from"),
            ("https://gh.example.com/?a=1", "without the part from"),
            ("https://me:secret@gh.example.com", "Leave names and passwords out"),
        ] {
            let error = TeamUrl::parse(text).unwrap_err();
            assert_eq!(error.code, CheckCode::BadUrl, "{text}");
            assert!(error.message.contains(says), "{text}: {}", error.message);
        }
    }

    struct Team {
        _dir: tempfile::TempDir,
        runtime: tokio::runtime::Runtime,
        server: RunningServer,
        engine: Engine,
    }

    impl Team {
        fn start() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let engine = Engine::open(dir.path().join("team.db"), EngineConfig::default()).unwrap();
            let runtime = tokio::runtime::Runtime::new().unwrap();
            let config = ServerConfig { bind: SocketAddr::from(([127, 0, 0, 1], 0)), ..ServerConfig::default() };
            let server = runtime.block_on(gatehouse_server::start(engine.clone(), config)).unwrap();
            Self { _dir: dir, runtime, server, engine }
        }

        fn url(&self) -> TeamUrl {
            TeamUrl::parse(&format!("http://{}", self.server.addr)).unwrap()
        }

        fn token(&self, name: &str, role: TokenRole) -> String {
            self.engine.create_token(name, role, "test").unwrap().1
        }

        fn check(&self, url: &TeamUrl, token: &str) -> Result<Reviewer, CheckError> {
            self.runtime.block_on(check(&reqwest::Client::new(), url, token))
        }
    }

    #[test]
    fn a_reviewer_token_passes_and_says_who_it_is() {
        let team = Team::start();
        let token = team.token("alice", TokenRole::Reviewer);
        let reviewer = team.check(&team.url(), &format!(" {token} ")).unwrap();
        assert_eq!(reviewer, Reviewer { name: "alice".into(), role: TokenRole::Reviewer });
        let admin = team.token("root", TokenRole::Admin);
        assert_eq!(team.check(&team.url(), &admin).unwrap().role, TokenRole::Admin);
    }

    #[test]
    fn each_wrong_token_gets_its_own_code() {
        let team = Team::start();
        let agent = team.token("bot", TokenRole::Agent);
        let refused = team.check(&team.url(), &agent).unwrap_err();
        assert_eq!(refused.code, CheckCode::NotReviewer, "{refused:?}");
        assert!(refused.message.contains("“bot”"), "{}", refused.message);

        let unknown = team.check(&team.url(), "not-a-token").unwrap_err();
        assert_eq!(unknown.code, CheckCode::BadToken, "{unknown:?}");

        let revoked = team.engine.create_token("carol", TokenRole::Reviewer, "test").unwrap();
        team.engine.revoke_token(&revoked.0.id, "test").unwrap();
        assert_eq!(team.check(&team.url(), &revoked.1).unwrap_err().code, CheckCode::BadToken);

        assert_eq!(team.check(&team.url(), "  ").unwrap_err().code, CheckCode::NoToken);
    }

    #[test]
    fn nothing_listening_is_unreachable_and_another_server_is_not_gatehouse() {
        let team = Team::start();
        let token = team.token("alice", TokenRole::Reviewer);
        // A port nothing listens on: bound, then let go.
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let nobody = TeamUrl::parse(&format!("http://{free}")).unwrap();
        let refused = team.check(&nobody, &token).unwrap_err();
        assert_eq!(refused.code, CheckCode::Unreachable, "{refused:?}");
        assert!(refused.message.contains(&free.to_string()), "{}", refused.message);

        // Something else on HTTP: a server answering every path with a page,
        // or refusing it with one (a proxy's 403 is not Gatehouse refusing).
        for status in ["200 OK", "403 Forbidden"] {
            let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let other_url = TeamUrl::parse(&format!("http://{}", other.local_addr().unwrap())).unwrap();
            std::thread::spawn(move || {
                use std::io::{Read, Write};
                for stream in other.incoming().flatten().take(1) {
                    let mut stream = stream;
                    let _ = stream.read(&mut [0; 4096]);
                    let page = "<html>hello</html>";
                    let _ = write!(stream, "HTTP/1.1 {status}\r\ncontent-length: {}\r\n\r\n{page}", page.len());
                }
            });
            let elsewhere = team.check(&other_url, &token).unwrap_err();
            assert_eq!(elsewhere.code, CheckCode::NotGatehouse, "{status}: {elsewhere:?}");
        }
    }
}
