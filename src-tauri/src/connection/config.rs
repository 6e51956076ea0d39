//! The settings file (`connection.json` in the app's config directory):
//! which server the window reviews, the team server's address, and how many
//! days this computer's server keeps ended runs (`retention_days`, set by
//! hand; none keeps everything) and its alert thresholds and SLA targets
//! (`alerts`, the fields of `serve --alert-*`: `pending_queue`,
//! `sync_gate_waiting_minutes`, `auto_pass_rate_percent`, `webhook_failures`,
//! `window_minutes`, `sla`; none set raises no alert). Never the token,
//! which lives only in the OS keychain.

use std::path::{Path, PathBuf};

use gatehouse_server::alerts::AlertConfig;
use serde::{Deserialize, Serialize};

/// The file's name in the app's config directory.
pub const FILE: &str = "connection.json";

/// Which server the window reviews.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Choice {
    /// The server inside the app.
    #[default]
    ThisComputer,
    /// The team server at `team_url`.
    Team,
}

/// What the file holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Which server to connect to at start.
    #[serde(default)]
    pub server: Choice,
    /// The last team server connected to (kept when switching back, so it
    /// is offered again); its token is in the keychain under this address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_url: Option<String>,
    /// This computer's server purges ended runs older than this many days,
    /// at start and daily (1 to 36500); absent keeps everything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention_days: Option<u32>,
    /// This computer's server's alert thresholds and SLA targets; absent, no alert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alerts: Option<AlertConfig>,
}

/// The most days `retention_days` may be: a hundred years.
pub const MAX_RETENTION_DAYS: u32 = 36_500;

/// The settings file at its place.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    path: PathBuf,
}

impl ConfigFile {
    /// The file in `dir` (the app's config directory).
    pub fn in_dir(dir: &Path) -> Self {
        Self { path: dir.join(FILE) }
    }

    #[cfg(test)]
    fn path(&self) -> &Path {
        &self.path
    }

    /// The settings; the defaults (this computer) when there is no file
    /// yet, a message naming the file when it cannot be read.
    pub fn load(&self) -> Result<Settings, String> {
        let settings = self.read()?;
        match settings.retention_days {
            Some(days) if !(1..=MAX_RETENTION_DAYS).contains(&days) => Err(format!(
                "the settings {} are not valid (retention_days must be from 1 to {MAX_RETENTION_DAYS}, got {days})",
                self.path.display()
            )),
            _ => match settings.alerts.as_ref().map(AlertConfig::check) {
                Some(Err((field, why))) => {
                    Err(format!("the settings {} are not valid (alerts.{field} {why})", self.path.display()))
                }
                _ => Ok(settings),
            },
        }
    }

    /// Remembers which server to review, keeping the rest of the settings.
    pub fn save_choice(&self, server: Choice, team_url: Option<String>) -> Result<(), String> {
        let kept = self.load().unwrap_or_default();
        self.save(&Settings { server, team_url, ..kept })
    }

    fn read(&self) -> Result<Settings, String> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Settings::default()),
            Err(e) => return Err(format!("cannot read the connection settings {}: {e}", self.path.display())),
        };
        serde_json::from_str(&text).map_err(|e| {
            format!(
                "the connection settings {} are not valid ({e}); connect again to rewrite them",
                self.path.display()
            )
        })
    }

    /// Writes `settings`, replacing the file in one step (a crash leaves
    /// the old file or the new one, never half of one).
    pub fn save(&self, settings: &Settings) -> Result<(), String> {
        let fail = |e: std::io::Error| format!("cannot save the connection settings to {}: {e}", self.path.display());
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(fail)?;
        }
        let text = serde_json::to_string_pretty(settings).map_err(|e| format!("cannot write the settings: {e}"))?;
        let partial = self.path.with_extension("json.partial");
        std::fs::write(&partial, text + "\n").map_err(fail)?;
        std::fs::rename(&partial, &self.path).map_err(fail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_file_means_this_computer() {
        let dir = tempfile::tempdir().unwrap();
        let file = ConfigFile::in_dir(&dir.path().join("not-yet"));
        assert_eq!(
            file.load().unwrap(),
            Settings { server: Choice::ThisComputer, team_url: None, retention_days: None, alerts: None }
        );
    }

    #[test]
    fn settings_survive_a_save_and_hold_no_token() {
        let dir = tempfile::tempdir().unwrap();
        let file = ConfigFile::in_dir(&dir.path().join("dev.gatehouse.desktop"));
        let team =
            Settings { team_url: Some("https://gh.example.com".into()), server: Choice::Team, ..Settings::default() };
        file.save(&team).unwrap();
        assert_eq!(file.load().unwrap(), team);
        let text = std::fs::read_to_string(file.path()).unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            serde_json::json!({"server": "team", "team_url": "https://gh.example.com"})
        );
        let back = Settings { server: Choice::ThisComputer, ..team };
        file.save(&back).unwrap();
        assert_eq!(file.load().unwrap(), back, "switching back keeps the team's address");
        assert!(!file.path().with_extension("json.partial").exists());
    }

    #[test]
    fn a_broken_file_is_reported_by_its_path_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let file = ConfigFile::in_dir(dir.path());
        for bad in [
            "{",
            r#"{"server": "mars"}"#,
            r#"{"server": "team", "token": "s3cret"}"#,
            r#"{"retention_days": 0}"#,
            r#"{"retention_days": 40000}"#,
        ] {
            std::fs::write(file.path(), bad).unwrap();
            let error = file.load().unwrap_err();
            assert!(error.contains(&file.path().display().to_string()) && error.contains("not valid"), "{error}");
        }
    }

    #[test]
    fn switching_servers_keeps_the_retention_set_by_hand() {
        let dir = tempfile::tempdir().unwrap();
        let file = ConfigFile::in_dir(dir.path());
        std::fs::write(file.path(), r#"{"server": "this_computer", "retention_days": 30}"#).unwrap();
        file.save_choice(Choice::Team, Some("https://gh.example.com".into())).unwrap();
        let saved = file.load().unwrap();
        assert_eq!((saved.server, saved.retention_days), (Choice::Team, Some(30)));
        file.save_choice(Choice::ThisComputer, None).unwrap();
        assert_eq!(file.load().unwrap().retention_days, Some(30));
    }

    #[test]
    fn alert_thresholds_are_read_checked_and_kept_when_switching_servers() {
        let dir = tempfile::tempdir().unwrap();
        let file = ConfigFile::in_dir(dir.path());
        std::fs::write(
            file.path(),
            r#"{"alerts": {"pending_queue": 20, "sla": {"low_ms": 1, "normal_ms": 2, "high_ms": 3, "urgent_ms": 4}}}"#,
        )
        .unwrap();
        let alerts = file.load().unwrap().alerts.unwrap();
        assert_eq!((alerts.pending_queue, alerts.window_minutes, alerts.sla.urgent_ms), (Some(20), 60, 4));
        file.save_choice(Choice::Team, Some("https://gh.example.com".into())).unwrap();
        assert_eq!(file.load().unwrap().alerts.unwrap().pending_queue, Some(20));
        std::fs::write(file.path(), r#"{"alerts": {"auto_pass_rate_percent": 150}}"#).unwrap();
        let error = file.load().unwrap_err();
        assert!(error.contains("alerts.auto_pass_rate_percent"), "{error}");
    }
}
