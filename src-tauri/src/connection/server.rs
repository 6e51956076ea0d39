//! A server the window reviews, as one value: where it is (this computer
//! or a team server), its origin, the reviewer it signs in as and its token
//! (never printed), with the addresses the window opens there.

use std::fmt;

use serde::Serialize;

use super::check::{Reviewer, TeamUrl};
use super::page;

/// Where a server is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// The server inside this app.
    ThisComputer,
    /// A team server.
    Team,
}

/// A server the window reviews: its origin and the reviewer token it
/// signs in with.
#[derive(Clone)]
pub struct Server {
    /// Where it is.
    pub place: Place,
    /// `http(s)://host:port`, no final `/`.
    pub origin: String,
    /// Who decisions are recorded as there.
    pub reviewer: String,
    token: String,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("place", &self.place)
            .field("origin", &self.origin)
            .field("reviewer", &self.reviewer)
            .field("token", &"[redacted]")
            .finish()
    }
}

impl Server {
    /// This computer's server at `origin`, signed in with `token`.
    pub fn this_computer(origin: String, token: String, reviewer: String) -> Self {
        Self { place: Place::ThisComputer, origin, reviewer, token }
    }

    /// The team server at `url`, signed in as `reviewer` with `token`.
    pub fn team(url: &TeamUrl, token: String, reviewer: &Reviewer) -> Self {
        Self { place: Place::Team, origin: url.origin(), reviewer: reviewer.name.clone(), token }
    }

    /// The bearer token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// What the header, the tray and the window's title call it.
    pub fn label(&self) -> String {
        match self.place {
            Place::ThisComputer => "This computer".to_owned(),
            Place::Team => format!("Team: {}", host_of(&self.origin)),
        }
    }

    /// The window's address: the UI, signed in by the fragment (which never
    /// reaches the server, and which the page removes at once), told which
    /// server this is and where the connection page is; `notice` names a
    /// fixed message the page shows (it takes no text from the address).
    pub fn window_url(&self, notice: Option<&str>) -> String {
        let place = match self.place {
            Place::ThisComputer => "this-computer",
            Place::Team => "team",
        };
        let mut url =
            format!("{}/#token={}&server={place}&connection={}", self.origin, encode(&self.token), encode(page::URL));
        if let Some(notice) = notice {
            url.push_str(&format!("&notice={}", encode(notice)));
        }
        url
    }

    /// The address that opens one gate in the window.
    pub fn gate_url(&self, gate_id: &str) -> String {
        format!("{}/#gate={}", self.origin, encode(gate_id))
    }

    /// The address of one of the desk's views (`metrics`) on this server.
    pub fn view_url(&self, view: &str) -> String {
        format!("{}/#view={}", self.origin, encode(view))
    }
}

fn host_of(origin: &str) -> &str {
    origin.split_once("://").map_or(origin, |(_, host)| host)
}

/// Percent-encodes a fragment parameter's value.
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The notice the page shows after the team server could not be used at start.
pub const NOTICE_TEAM_UNAVAILABLE: &str = "team-unavailable";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_told_its_server_and_token_in_the_fragment_only() {
        let server = Server::this_computer("http://127.0.0.1:4321".into(), "a+b/c=".into(), "ann".into());
        assert_eq!(server.label(), "This computer");
        let url = server.window_url(None);
        assert!(url.starts_with("http://127.0.0.1:4321/#token=a%2Bb%2Fc%3D&server=this-computer&connection="), "{url}");
        assert!(url.ends_with(&encode(page::URL)), "{url}");
        assert!(server.window_url(Some(NOTICE_TEAM_UNAVAILABLE)).ends_with("&notice=team-unavailable"));
        assert!(!format!("{server:?}").contains("a+b/c="), "the token stays out of Debug output");

        let url = TeamUrl::parse("https://gh.example.com:8443").unwrap();
        let team = Server::team(
            &url,
            "t".into(),
            &Reviewer { name: "bo".into(), role: gatehouse_engine::TokenRole::Reviewer },
        );
        assert_eq!(team.label(), "Team: gh.example.com:8443");
        assert!(team.window_url(None).starts_with("https://gh.example.com:8443/#token=t&server=team&"));
        assert_eq!(team.gate_url("gate_1"), "https://gh.example.com:8443/#gate=gate_1");
        assert_eq!(team.view_url("metrics"), "https://gh.example.com:8443/#view=metrics");
    }
}
