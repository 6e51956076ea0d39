//! HTTPS and scoped tokens from the command line: `serve` over HTTPS with
//! `--tls-cert`/`--tls-key` (files it cannot use are errors naming them,
//! never a panic), and tokens scoped with `token create --run/--agent`.
//! The certificate is the server crate's test fixture, signed by its test CA.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn gatehouse(db: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gatehouse"));
    cmd.arg("--db").arg(db).env_remove("GATEHOUSE_DB").env_remove("GATEHOUSE_TOKEN");
    cmd
}

fn run(db: &Path, args: &[&str]) -> Output {
    gatehouse(db).args(args).output().expect("the gatehouse binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn fixture(name: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../gatehouse-server/tests/fixtures/tls");
    dir.join(name).to_str().expect("utf-8 path").to_owned()
}

/// `gatehouse serve` on HTTPS with the test certificate, and its URL.
fn serve_https(db: &Path) -> (std::process::Child, String) {
    let (cert, key) = (fixture("server.pem"), fixture("server-key.pem"));
    let mut child = gatehouse(db)
        .args(["serve", "--bind", "127.0.0.1:0", "--tls-cert", &cert, "--tls-key", &key])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (tx, lines) = std::sync::mpsc::channel();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || BufReader::new(out).lines().map_while(Result::ok).for_each(|l| drop(tx.send(l))));
    let deadline = Instant::now() + Duration::from_secs(30);
    let url = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines.recv_timeout(left).unwrap_or_else(|_| panic!("no listening line"));
        if let Some(url) = line.strip_prefix("Gatehouse listening on ") {
            break url.to_owned();
        }
    };
    (child, url)
}

#[test]
fn serve_with_a_certificate_listens_on_https_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let (mut child, url) = serve_https(&db);
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");

    let admin = std::fs::read_to_string(dir.path().join("admin-token")).unwrap();
    let ca = reqwest::Certificate::from_pem(&std::fs::read(fixture("ca.pem")).unwrap()).unwrap();
    let https = reqwest::blocking::Client::builder().add_root_certificate(ca).build().unwrap();
    let me = https.get(format!("{url}/api/hitl/whoami")).bearer_auth(admin.trim()).send().unwrap();
    assert_eq!(me.status(), 200);
    let plain = reqwest::blocking::get(url.replace("https://", "http://") + "/api/hitl/whoami");
    assert!(plain.is_err(), "plain HTTP got an answer: {plain:?}");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn client_commands_reach_an_https_server_trusting_the_ca_given() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let (mut child, url) = serve_https(&db);
    let list = |extra: &[&str]| {
        let mut args = vec!["gates", "list", "--url", url.as_str()];
        args.extend_from_slice(extra);
        run(&db, &args)
    };

    // The test CA is not among the built-in roots: refused, and told why.
    let untrusted = list(&[]);
    assert!(!untrusted.status.success());
    let message = text(&untrusted.stderr);
    assert!(message.contains("certificate") && message.contains("--ca-cert"), "{message}");

    let ca = fixture("ca.pem");
    let trusted = list(&["--ca-cert", &ca]);
    assert!(trusted.status.success(), "{}", text(&trusted.stderr));
    let by_env = gatehouse(&db).args(["gates", "list", "--url", &url]).env("GATEHOUSE_CA_CERT", &ca).output().unwrap();
    assert!(by_env.status.success(), "{}", text(&by_env.stderr));

    // Files it cannot use are named.
    let missing = dir.path().join("missing.pem");
    let not_pem = dir.path().join("not.pem");
    std::fs::write(&not_pem, "hello").unwrap();
    for bad in [&missing, &not_pem] {
        let out = list(&["--ca-cert", bad.to_str().unwrap()]);
        assert!(!out.status.success());
        let message = text(&out.stderr);
        assert!(message.contains(bad.to_str().unwrap()), "{message}");
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn serve_refuses_tls_files_it_cannot_use_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let missing = dir.path().join("missing.pem");
    let missing = missing.to_str().unwrap();
    let cases = [
        (missing.to_owned(), fixture("server-key.pem"), "cannot read the TLS certificate", "missing.pem"),
        (fixture("server.pem"), fixture("other-key.pem"), "does not belong to the certificate", "other-key.pem"),
        (fixture("server-key.pem"), fixture("server-key.pem"), "no certificate", "server-key.pem"),
    ];
    for (cert, key, what, file) in cases {
        let out = run(&db, &["serve", "--bind", "127.0.0.1:0", "--tls-cert", &cert, "--tls-key", &key]);
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{err}");
        assert!(err.contains(what) && err.contains(file) && !err.contains("panicked"), "{err}");
    }
    let out = run(&db, &["serve", "--tls-cert", &fixture("server.pem")]);
    assert!(!out.status.success() && text(&out.stderr).contains("--tls-key"), "{}", text(&out.stderr));
    let out = run(&db, &["serve", "--public-url", "gatehouse.example.com"]);
    assert!(!out.status.success() && text(&out.stderr).contains("--public-url"), "{}", text(&out.stderr));
}

#[test]
fn token_create_scopes_a_token_and_the_listing_shows_the_scope() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let out = run(&db, &["token", "create", "--role", "reviewer", "--name", "ci", "--agent", "deployer"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("ghs_"), "the secret alone on stdout");
    assert!(text(&out.stderr).contains("scoped to agent:deployer"), "{}", text(&out.stderr));
    let out = run(&db, &["token", "create", "--role", "agent", "--name", "bot"]);
    assert!(out.status.success() && !text(&out.stderr).contains("scoped"), "{}", text(&out.stderr));

    let out = run(&db, &["token", "create", "--role", "reviewer", "--name", "x", "--run", "run_nope"]);
    let err = text(&out.stderr);
    assert!(!out.status.success() && err.contains("scope.runs[0]") && err.contains("run_nope"), "{err}");

    let list = text(&run(&db, &["token", "list"]).stdout);
    let row = |name: &str| list.lines().find(|l| l.split_whitespace().nth(1) == Some(name)).unwrap_or_default();
    assert!(list.lines().next().unwrap_or_default().contains("scope"), "{list}");
    assert_eq!(row("ci").split_whitespace().nth(4), Some("agent:deployer"), "{list}");
    assert_eq!(row("bot").split_whitespace().nth(4), Some("-"), "{list}");
    assert!(!list.contains("\nx "), "the refused token was not stored: {list}");
}
