//! Files Gatehouse writes are readable only by their owner, whatever the
//! umask: the data directory is 0700; the database, its `-wal` and `-shm`,
//! the admin token, the audit key and exports are 0600.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;

use crate::common::{assert_success, wait_output, Server, WAIT};

/// Runs what follows with umask 000, as a careless service manager might.
const UMASK_000: [&str; 3] = ["sh", "-c", "umask 000; exec \"$0\" \"$@\""];

/// The file's permission bits in octal, as `ls` and `chmod` write them.
fn mode(path: &Path) -> String {
    let mode = std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).permissions().mode();
    format!("{:o}", mode & 0o777)
}

#[test]
fn under_umask_000_the_database_its_wal_the_admin_token_and_the_audit_key_are_private() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let db = data.join("gatehouse.db");
    let server = Server::spawn_wrapped(&db, &UMASK_000, &["serve", "--bind", "127.0.0.1:0"]);

    assert_eq!(mode(&data), "700", "the data directory");
    for file in ["gatehouse.db", "gatehouse.db-wal", "gatehouse.db-shm", "admin-token", "audit-key"] {
        assert_eq!(mode(&data.join(file)), "600", "{file}");
    }

    let export = data.join("recording.json");
    let child = std::process::Command::new(UMASK_000[0])
        .args(&UMASK_000[1..])
        .arg(env!("CARGO_BIN_EXE_gatehouse"))
        .arg("--db")
        .arg(&db)
        .args(["export", "--all", "-o"])
        .arg(&export)
        .env_remove("GATEHOUSE_DB")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gatehouse runs");
    assert_success(&wait_output(child, WAIT));
    assert_eq!(mode(&export), "600", "an export");
    drop(server);
}

#[test]
fn an_existing_readable_database_is_made_private_when_served() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("gatehouse.db");
    rusqlite::Connection::open(&db).unwrap().execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (x);").unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();

    let server = Server::spawn_wrapped(&db, &UMASK_000, &["serve", "--bind", "127.0.0.1:0"]);
    for file in ["gatehouse.db", "gatehouse.db-wal", "gatehouse.db-shm"] {
        assert_eq!(mode(&tmp.path().join(file)), "600", "{file}");
    }
    drop(server);
}

#[test]
fn the_default_data_directory_is_made_private_even_when_it_was_readable() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("gatehouse");
    std::fs::create_dir(&data).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    let child = crate::common::bare()
        .env("XDG_DATA_HOME", home.path())
        .args(["export", "--all"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gatehouse runs");
    let _ = wait_output(child, WAIT);
    assert_eq!(mode(&data), "700");
    assert_eq!(mode(&data.join("gatehouse.db")), "600");
}
