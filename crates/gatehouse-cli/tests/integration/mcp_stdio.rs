//! `gatehouse mcp` on stdio, driven by hand-written JSON-RPC lines: it
//! refuses to start without a token, lists its tools without a server, and
//! answers a call it cannot carry out with an error result saying why.
//! (tests/interop/mcp drives it with the official Python SDK against a real
//! server.)

use crate::common;

use std::io::Write;
use std::process::Stdio;

use serde_json::{json, Value};

use common::{gatehouse, stderr, wait_output, WAIT};

#[test]
fn mcp_without_a_token_exits_3_saying_how_to_make_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = gatehouse(&dir.path().join("g.db")).arg("mcp").stdin(Stdio::null()).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("gatehouse token create --role agent"), "{}", stderr(&out));
}

#[test]
fn mcp_lists_its_tools_and_says_when_the_server_cannot_be_reached() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = gatehouse(&dir.path().join("g.db"))
        .args(["mcp", "--url", "http://127.0.0.1:9", "--token", "t"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "script", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "ask_human", "arguments": {"question": "Which region?"}}}),
    ];
    let mut stdin = child.stdin.take().unwrap();
    for line in &lines {
        writeln!(stdin, "{line}").unwrap();
    }
    // Closing stdin ends the session once the answers are out.
    let closer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(3));
        drop(stdin);
    });
    let out = wait_output(child, WAIT);
    closer.join().unwrap();
    let answers: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("stdout is JSON-RPC only"))
        .collect();
    let by_id =
        |id: i64| answers.iter().find(|a| a["id"] == id).unwrap_or_else(|| panic!("no answer {id}: {answers:?}"));
    assert_eq!(by_id(1)["result"]["serverInfo"]["name"], "gatehouse");
    let tools = by_id(2)["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 13);
    assert!(tools.iter().any(|t| t["name"] == "request_permission"));
    let call = &by_id(3)["result"];
    assert_eq!(call["isError"], true);
    let said = call["content"][0]["text"].as_str().unwrap();
    assert!(said.contains("cannot reach the Gatehouse server at http://127.0.0.1:9"), "{call}");
    assert_eq!(said.matches("gatehouse serve").count(), 1, "what to do is said once: {said}");
}
