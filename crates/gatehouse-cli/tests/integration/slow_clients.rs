//! Slow and idle clients cannot take `gatehouse serve` down: the open-file
//! limit is raised at start, a request's headers and an idle connection
//! have deadlines, and past the connection cap a client gets an immediate
//! 503 with the API's JSON error body.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::common::Server;

/// A request's first line and part of its headers; the rest never comes.
const PARTIAL_HEADER: &[u8] = b"GET /api/hitl/gates HTTP/1.1\r\nHost: 127.0.0.1\r\n";

fn serve(db: &std::path::Path, soft_open_files: Option<u32>, flags: &[&str]) -> Server {
    let args: Vec<&str> = ["serve", "--bind", "127.0.0.1:0"].iter().chain(flags).copied().collect();
    match soft_open_files {
        // `prlimit --nofile=N:` lowers only the soft limit, as a default `ulimit -n` of 1024 does.
        Some(n) => Server::spawn_wrapped(db, &["prlimit", &format!("--nofile={n}:")], &args),
        None => Server::spawn_wrapped(db, &["env"], &args),
    }
}

fn connect(server: &Server) -> TcpStream {
    let addr = server.url.trim_start_matches("http://").parse().expect("the server's address");
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).expect("connect to the server");
    stream.set_read_timeout(Some(Duration::from_secs(5))).expect("a read timeout");
    stream
}

fn open_files(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map(|dir| dir.count()).unwrap_or(0)
}

/// Reads until the server closes the connection (or 5 s pass) and returns what it sent.
fn read_to_close(stream: &mut TcpStream) -> std::io::Result<String> {
    let mut text = Vec::new();
    stream.read_to_end(&mut text)?;
    Ok(String::from_utf8_lossy(&text).into_owned())
}

#[test]
fn a_slow_header_flood_does_not_starve_a_normal_request() {
    let tmp = tempfile::tempdir().unwrap();
    // This test holds the flood's sockets too.
    gatehouse_server::connections::raise_open_file_limit();
    let server = serve(&tmp.path().join("gatehouse.db"), Some(1024), &[]);

    let flood: Vec<TcpStream> = (0..1_100)
        .map(|_| {
            let mut stream = connect(&server);
            stream.write_all(PARTIAL_HEADER).expect("send a partial header");
            stream
        })
        .collect();
    // Let the server take them all in (it holds a descriptor per connection), within a bound.
    let deadline = Instant::now() + Duration::from_secs(5);
    while open_files(server.pid()) < flood.len() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }

    let client = reqwest::blocking::Client::builder().timeout(Duration::from_secs(5)).build().unwrap();
    let started = Instant::now();
    let answer = client.get(format!("{}/api/hitl/gates", server.url)).bearer_auth(&server.admin).send();
    let took = started.elapsed();
    let answer = answer.expect("a normal request is answered during the flood");
    assert_eq!(answer.status(), 200, "{:?}", answer.text());
    assert!(took < Duration::from_secs(1), "the normal request took {took:?}");
    drop(flood);
}

#[test]
fn a_client_that_never_finishes_its_headers_is_disconnected() {
    let tmp = tempfile::tempdir().unwrap();
    let server = serve(&tmp.path().join("gatehouse.db"), None, &["--header-read-timeout", "1"]);
    let mut stream = connect(&server);
    stream.write_all(PARTIAL_HEADER).unwrap();
    let started = Instant::now();
    let _ = read_to_close(&mut stream).expect("the server closes the connection within the read timeout");
    assert!(started.elapsed() < Duration::from_secs(4), "closed after {:?}", started.elapsed());
}

#[test]
fn an_idle_keep_alive_connection_is_closed() {
    let tmp = tempfile::tempdir().unwrap();
    let server = serve(&tmp.path().join("gatehouse.db"), None, &["--idle-timeout", "1"]);
    let mut stream = connect(&server);
    stream.write_all(b"GET /api/hitl/openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let started = Instant::now();
    let answered = read_to_close(&mut stream).expect("the server closes the idle connection within the read timeout");
    assert!(answered.starts_with("HTTP/1.1 200"), "{}", answered.lines().next().unwrap_or_default());
    assert!(started.elapsed() < Duration::from_secs(4), "closed after {:?}", started.elapsed());
}

#[test]
fn past_the_connection_cap_a_client_gets_an_immediate_json_503() {
    let tmp = tempfile::tempdir().unwrap();
    let server = serve(&tmp.path().join("gatehouse.db"), None, &["--max-connections", "4"]);
    let held: Vec<TcpStream> = (0..4).map(|_| connect(&server)).collect();

    // Each attempt is a new connection; the held ones are taken in first, within a bound.
    let client =
        reqwest::blocking::Client::builder().timeout(Duration::from_secs(5)).pool_max_idle_per_host(0).build().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let refused = loop {
        let answer = client.get(format!("{}/api/hitl/gates", server.url)).bearer_auth(&server.admin).send().unwrap();
        if answer.status() == 503 || Instant::now() >= deadline {
            break answer;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["content-type"], "application/json");
    let body: serde_json::Value = refused.json().unwrap();
    assert_eq!(body["code"], "unavailable", "{body}");
    drop(held);
}

#[test]
fn out_of_file_descriptors_the_server_backs_off_quietly_and_recovers() {
    let tmp = tempfile::tempdir().unwrap();
    // Soft and hard: the server cannot raise it, and more clients come than it has descriptors for.
    let server = Server::spawn_wrapped(
        &tmp.path().join("gatehouse.db"),
        &["prlimit", "--nofile=128:128"],
        &["serve", "--bind", "127.0.0.1:0"],
    );
    // More than it can accept, but few enough for the listen backlog to hold the rest.
    let flood: Vec<TcpStream> = (0..200).map(|_| connect(&server)).collect();
    std::thread::sleep(Duration::from_secs(3));
    let exhausted = server.log_text().lines().filter(|l| l.contains("Too many open files")).count();
    assert!(exhausted <= 1, "{exhausted} log lines about running out of descriptors in 3 s:\n{}", server.log_text());
    drop(flood);

    // Once the clients leave, a normal request is answered again, within a bound.
    let client = reqwest::blocking::Client::builder().timeout(Duration::from_secs(5)).build().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let answer = client.get(format!("{}/api/hitl/gates", server.url)).bearer_auth(&server.admin).send();
        match answer {
            Ok(answer) if answer.status() == 200 => break,
            other => assert!(Instant::now() < deadline, "no answer after the flood: {other:?}"),
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
