//! `gatehouse signin-link`: asks the running server for a one-time link
//! that signs the reviewer UI in (`POST /api/hitl/signin-links`, admins),
//! the same kind `gatehouse serve` prints when it starts: the long-lived
//! token stays out of the address bar and the shell's history.

use anyhow::Result;
use serde::Deserialize;

use crate::client::Api;
use crate::out::outln;

#[derive(Deserialize)]
struct Link {
    url: String,
    expires_at: String,
}

/// Prints a link signing in as `name` (default: this computer's user).
pub fn signin_link(api: &Api, name: Option<String>) -> Result<()> {
    let name = name.or_else(|| std::env::var("USER").ok()).filter(|n| !n.trim().is_empty());
    let link: Link = api.post(&["signin-links"], &serde_json::json!({ "name": name }))?;
    outln!("{}", link.url);
    eprintln!("(it works once, until {}; open it in the browser)", link.expires_at);
    Ok(())
}
