//! PostgreSQL over TLS: the test cluster offers TLS with a certificate for
//! `localhost` signed by a certificate authority made for it. `verify-full`
//! with that authority connects encrypted; another authority, or a host
//! name the certificate does not list, stops the start with a message
//! naming the setting; `require`, `prefer` and `disable` keep libpq's
//! meaning. On PostgreSQL only (`GATEHOUSE_TEST_BACKEND=postgres`).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use gatehouse_engine::{Database, Engine, EngineConfig, EngineError, NewGate, NewRun, PgOptions, SystemClock};

/// The cluster's URL and its authority, when these tests can run.
fn cluster() -> Option<(String, PathBuf)> {
    let url = common::postgres_url()?;
    let ca = common::postgres_ca().expect(
        "the test cluster offers no TLS: scripts/postgres.sh makes its certificate with openssl \
         (GATEHOUSE_TEST_POSTGRES_CA names the authority when GATEHOUSE_TEST_POSTGRES is set)",
    );
    Some((url, ca))
}

/// The cluster's URL by `host` (over its loopback address), tagged with
/// `name` and the settings `extra`.
fn url_by(base: &str, host: &str, name: &str, extra: &str) -> String {
    let by_name = base.replacen("@127.0.0.1:", &format!("@{host}:"), 1);
    format!("{by_name}?hostaddr=127.0.0.1&application_name={name}&{extra}")
}

fn open(url: &str) -> gatehouse_engine::Result<Engine> {
    let schema = Some(format!("test_{}", uuid::Uuid::new_v4().simple()));
    let config = EngineConfig { postgres: PgOptions { schema, ..PgOptions::default() }, ..Default::default() };
    Engine::open_database(&Database::Postgres(url.to_owned()), config, Arc::new(SystemClock))
}

/// Whether the connections named `name` are encrypted: `Some(true)` if all
/// are, `Some(false)` if none is, `None` if there are none.
fn encrypted(base: &str, name: &str) -> Option<bool> {
    let mut client = postgres::Client::connect(base, postgres::NoTls).expect("connect");
    let rows = client
        .query(
            "SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.application_name = $1",
            &[&name],
        )
        .expect("pg_stat_ssl");
    let flags: Vec<bool> = rows.iter().map(|r| r.get(0)).collect();
    match (flags.iter().all(|f| *f), flags.iter().any(|f| *f), flags.is_empty()) {
        (_, _, true) => None,
        (true, _, _) => Some(true),
        (_, false, _) => Some(false),
        _ => panic!("{name}: some connections are encrypted and some are not"),
    }
}

/// Opens an engine at `url`, does a gate's worth of work, and says whether
/// its connections were encrypted.
fn work_and_check(base: &str, url: &str, name: &str) -> bool {
    let engine = open(url).unwrap_or_else(|e| panic!("{url}: {e}"));
    let run = engine
        .create_run(NewRun { agent: "agent".into(), title: "TLS".into(), ..NewRun::default() }, "agent")
        .expect("run");
    engine.open_gate(&run.id, NewGate::question("Over TLS?"), "agent").expect("gate");
    let answer = encrypted(base, name).expect("the engine's connections are listed");
    drop(engine);
    answer
}

fn refusal(url: &str) -> String {
    match open(url) {
        Ok(_) => panic!("{url} connected"),
        Err(e) => e.to_string(),
    }
}

/// A certificate authority that signed nothing the cluster has.
fn stray_authority(dir: &Path) -> PathBuf {
    let (key, cert) = (dir.join("stray.key"), dir.join("stray.crt"));
    let made = Command::new("openssl")
        .args(["req", "-x509", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"])
        .args(["-days", "1", "-subj", "/CN=Stray CA", "-addext", "basicConstraints=critical,CA:TRUE"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl");
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    cert
}

#[test]
fn verify_full_with_the_clusters_authority_connects_encrypted() {
    let Some((base, ca)) = cluster() else { return };
    let name = format!("tls-full-{}", uuid::Uuid::new_v4().simple());
    let url = url_by(&base, "localhost", &name, &format!("sslmode=verify-full&sslrootcert={}", ca.display()));
    assert!(work_and_check(&base, &url, &name), "verify-full connected without TLS");
}

#[test]
fn another_authority_stops_the_start_naming_sslrootcert() {
    let Some((base, _)) = cluster() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let stray = stray_authority(dir.path());
    let url = url_by(&base, "localhost", "tls-stray", &format!("sslmode=verify-full&sslrootcert={}", stray.display()));
    let error = refusal(&url);
    assert!(error.contains("not signed by a certificate authority in sslrootcert"), "{error}");
    assert!(error.contains("sslmode=verify-full"), "{error}");
}

#[test]
fn a_connection_cut_during_the_tls_handshake_is_an_outage_and_a_refused_certificate_is_not() {
    // A server that accepts TLS and hangs up, as one shutting down may: the
    // caller hears "unavailable" (503, retry), never a failure to fix.
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut ssl_request = [0u8; 8];
            if stream.read_exact(&mut ssl_request).is_ok() {
                let _ = stream.write_all(b"S");
            }
        }
    });
    let cut = open(&format!("postgres://gatehouse@127.0.0.1:{port}/gatehouse?sslmode=require&connect_timeout=5"));
    let error = cut.err().expect("no database answered");
    assert!(matches!(error, EngineError::Unavailable(_)), "{error:?}");

    let Some((base, _)) = cluster() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let stray = stray_authority(dir.path());
    let url =
        url_by(&base, "localhost", "tls-refused", &format!("sslmode=verify-full&sslrootcert={}", stray.display()));
    let refused = open(&url).err().expect("the certificate was refused");
    assert!(!matches!(refused, EngineError::Unavailable(_)), "{refused:?}");
}

#[test]
fn a_host_name_the_certificate_does_not_list_stops_verify_full_but_not_verify_ca() {
    let Some((base, ca)) = cluster() else { return };
    let roots = format!("sslrootcert={}", ca.display());
    let error = refusal(&url_by(&base, "127.0.0.1", "tls-ip", &format!("sslmode=verify-full&{roots}")));
    assert!(error.contains("not valid for the host name `127.0.0.1`"), "{error}");
    assert!(error.contains("sslmode=verify-full"), "{error}");

    let name = format!("tls-ca-{}", uuid::Uuid::new_v4().simple());
    let url = url_by(&base, "127.0.0.1", &name, &format!("sslmode=verify-ca&{roots}"));
    assert!(work_and_check(&base, &url, &name), "verify-ca connected without TLS");
}

#[test]
fn require_and_prefer_encrypt_and_disable_does_not() {
    let Some((base, _)) = cluster() else { return };
    for (mode, tls) in [("require", true), ("prefer", true), ("disable", false)] {
        let name = format!("tls-{mode}-{}", uuid::Uuid::new_v4().simple());
        let url = url_by(&base, "127.0.0.1", &name, &format!("sslmode={mode}"));
        assert_eq!(work_and_check(&base, &url, &name), tls, "sslmode={mode}");
    }
}

#[test]
fn a_verifying_mode_without_sslrootcert_or_an_unknown_mode_is_refused_at_start() {
    let Some((base, _)) = cluster() else { return };
    let error = refusal(&url_by(&base, "localhost", "tls-noroot", "sslmode=verify-full"));
    assert!(error.contains("sslmode=verify-full needs sslrootcert"), "{error}");
    let error = refusal(&url_by(&base, "localhost", "tls-typo", "sslmode=verify_full"));
    assert!(error.contains("sslmode=verify_full is not one of"), "{error}");
}
