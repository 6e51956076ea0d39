//! A failing store answers 500 with a fixed message and an error id: the
//! storage error's text (SQL, table names, the database's path) stays in
//! the server's log.

use gatehouse_engine::Database;

use crate::common::TestServer;

/// Drops the `gates` table behind the server's back, so every read of
/// gates fails in the store.
async fn break_the_store(s: &TestServer) {
    match &s.database {
        Database::Sqlite(path) => {
            let conn = rusqlite::Connection::open(path).expect("open");
            conn.execute_batch("DROP TABLE gates").expect("drop");
        }
        Database::Postgres(url) => {
            let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connect");
            tokio::spawn(conn);
            let schema = s.schema.clone().expect("schema");
            client.batch_execute(&format!("DROP TABLE \"{schema}\".gates CASCADE")).await.expect("drop");
        }
    }
}

#[tokio::test]
async fn a_storage_failure_tells_the_client_an_error_id_and_nothing_of_the_store() {
    let s = TestServer::start().await;
    let run = s.run().await;
    s.gate(&run, serde_json::json!({"kind": "question", "text": "Which region?"})).await;
    break_the_store(&s).await;

    for path in ["/gates", "/gates/search?q=region", "/approvals/pending"] {
        let (status, body) = s.get(path, &s.reviewer).await;
        assert_eq!(status, 500, "{path}: {body}");
        assert_eq!(body["code"], "internal", "{path}: {body}");
        let message = body["message"].as_str().expect("message");
        assert!(message.contains("error id "), "{path}: {message}");
        let lower = message.to_lowercase();
        for leak in ["gates", "table", "select", "relation", "sql", "gatehouse.db", "/", "test_"] {
            assert!(!lower.contains(leak), "{path}: the body says `{leak}`: {message}");
        }
    }
}
