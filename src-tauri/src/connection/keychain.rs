//! The team server's reviewer token in the OS keychain (Keychain on macOS,
//! Credential Manager on Windows, the Secret Service on Linux), one entry
//! per server address under the app's identifier. The token is never
//! written anywhere else. This computer's audit key (which keys its event
//! log's hash chain, so the database alone cannot forge it) lives there
//! too, one per database file. Every call may block on the platform's store:
//! async callers run them on a blocking thread.

use keyring::Entry;

use super::check::TeamUrl;

/// The keychain entries of one app (its identifier names them).
#[derive(Debug, Clone)]
pub struct Keychain {
    service: String,
}

impl Keychain {
    /// Entries named after `service` (the app's identifier).
    pub fn new(service: &str) -> Self {
        Self { service: service.to_owned() }
    }

    fn entry(&self, url: &TeamUrl) -> Result<Entry, String> {
        Entry::new(&self.service, &url.origin()).map_err(|e| explain(&e))
    }

    /// The token saved for `url`, if any.
    pub fn token(&self, url: &TeamUrl) -> Result<Option<String>, String> {
        read(&self.entry(url)?)
    }

    /// Saves `token` for `url`, replacing any earlier one.
    pub fn save(&self, url: &TeamUrl, token: &str) -> Result<(), String> {
        self.entry(url)?.set_password(token).map_err(|e| explain(&e))
    }

    /// The audit key of the database at `db`, made and saved on first use.
    pub fn audit_key(&self, db: &std::path::Path) -> Result<String, String> {
        let entry = Entry::new(&self.service, &format!("audit-key:{}", db.display())).map_err(|e| explain(&e))?;
        if let Some(key) = read(&entry)? {
            return Ok(key);
        }
        let key = gatehouse_engine::event::AuditKey::generate();
        entry.set_password(&key).map_err(|e| explain(&e))?;
        Ok(key)
    }

    /// Removes the token saved for `url` (nothing saved is no failure).
    pub fn forget(&self, url: &TeamUrl) -> Result<(), String> {
        match self.entry(url)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(explain(&e)),
        }
    }
}

fn read(entry: &Entry) -> Result<Option<String>, String> {
    match entry.get_password() {
        Ok(token) if token.trim().is_empty() => Ok(None),
        Ok(token) => Ok(Some(token)),
        Err(keyring::Error::NoEntry) => Ok(None),
        Err(e) => Err(explain(&e)),
    }
}

/// What went wrong, and on Linux what usually fixes it.
fn explain(error: &keyring::Error) -> String {
    match error {
        keyring::Error::NoStorageAccess(_) | keyring::Error::PlatformFailure(_) if cfg!(target_os = "linux") => {
            format!(
                "the keychain is not available ({error}); Gatehouse keeps the token in the Secret Service \
                 (GNOME Keyring, KWallet or KeePassXC): start one and unlock it"
            )
        }
        _ => format!("the keychain refused ({error})"),
    }
}

#[cfg(test)]
mod tests {
    use keyring::mock::MockCredential;

    use super::*;

    fn entry(error: Option<keyring::Error>, token: Option<&str>) -> Entry {
        let mock = MockCredential::default();
        if let Some(error) = error {
            mock.set_error(error);
        }
        let entry = Entry::new_with_credential(Box::new(mock));
        if let Some(token) = token {
            entry.set_password(token).unwrap();
        }
        entry
    }

    #[test]
    fn no_entry_is_no_token_and_a_saved_one_is_read_back() {
        assert_eq!(read(&entry(None, None)), Ok(None));
        assert_eq!(read(&entry(None, Some("s3cret"))), Ok(Some("s3cret".into())));
        assert_eq!(read(&entry(None, Some("  "))), Ok(None), "a blank entry is no token");
    }

    #[test]
    fn a_keychain_that_cannot_answer_says_so() {
        let locked = keyring::Error::NoStorageAccess("the collection is locked".into());
        let said = read(&entry(Some(locked), None)).unwrap_err();
        assert!(said.contains("keychain") && said.contains("the collection is locked"), "{said}");
    }
}
