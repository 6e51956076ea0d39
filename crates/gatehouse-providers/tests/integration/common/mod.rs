//! A stand-in provider for the tests: an HTTP server on 127.0.0.1:0 that
//! answers each method and path from a queue of canned replies (the last
//! one repeating) and records every request it receives.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use axum::Router;
use gatehouse_providers::{ApiKey, ProviderConfig, ProviderKind, RetryPolicy};
use serde_json::Value;

/// The key the tests configure; it must never show anywhere but the request headers.
pub const KEY: &str = "sk-test-7f3a9c1e5b2d8f4a6c0e";

/// One canned reply. `{base}` in the body becomes the server's base URL.
#[derive(Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: String,
    delay: Option<Duration>,
}

impl Reply {
    pub fn json(status: u16, body: Value) -> Self {
        Self { status, headers: vec![("content-type", "application/json".into())], body: body.to_string(), delay: None }
    }

    pub fn text(status: u16, body: &str) -> Self {
        Self { status, headers: vec![("content-type", "text/plain".into())], body: body.to_owned(), delay: None }
    }

    pub fn header(mut self, name: &'static str, value: &str) -> Self {
        self.headers.push((name, value.to_owned()));
        self
    }

    /// Answers only after `delay` (longer than the client's timeout, for timeouts).
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: Method,
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

struct Inner {
    base: String,
    routes: Mutex<HashMap<(Method, String), VecDeque<Reply>>>,
    seen: Mutex<Vec<Seen>>,
}

pub struct MockProvider {
    pub base: String,
    inner: Arc<Inner>,
}

impl MockProvider {
    /// Serves `routes`: (method, path, replies in order).
    pub async fn start(routes: Vec<(Method, &str, Vec<Reply>)>) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
        let base = format!("http://{}", listener.local_addr().expect("bound address"));
        let routes =
            routes.into_iter().map(|(method, path, replies)| ((method, path.to_owned()), replies.into())).collect();
        let inner = Arc::new(Inner { base: base.clone(), routes: Mutex::new(routes), seen: Mutex::default() });
        let app = Router::new().fallback(answer).with_state(inner.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { base, inner }
    }

    /// Every request received, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.inner.seen.lock().unwrap().clone()
    }

    /// How many requests went to `method path`.
    pub fn count(&self, method: Method, path: &str) -> usize {
        self.seen().iter().filter(|s| s.method == method && s.path == path).count()
    }

    /// A configuration pointing at this server, with the test key, one
    /// model and retries that do not wait.
    pub fn config(&self, kind: ProviderKind, base_path: &str) -> ProviderConfig {
        let mut config = ProviderConfig::new(kind)
            .with_base_url(format!("{}{base_path}", self.base))
            .with_api_key(ApiKey::new(KEY))
            .with_models(["test-model"]);
        config.retry = RetryPolicy {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(5),
            ..RetryPolicy::default()
        };
        config.poll_interval = Duration::from_millis(1);
        config
    }
}

async fn answer(
    State(inner): State<Arc<Inner>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_owned();
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    inner.seen.lock().unwrap().push(Seen { method: method.clone(), path: path.clone(), headers, body });
    let reply = {
        let mut routes = inner.routes.lock().unwrap();
        routes.get_mut(&(method, path)).and_then(|queue| {
            if queue.len() > 1 {
                queue.pop_front()
            } else {
                queue.front().cloned()
            }
        })
    };
    let Some(reply) = reply else {
        return Response::builder().status(StatusCode::NOT_FOUND).body(Body::from("no such route")).unwrap();
    };
    if let Some(delay) = reply.delay {
        tokio::time::sleep(delay).await;
    }
    let mut response = Response::builder().status(reply.status);
    for (name, value) in &reply.headers {
        response = response.header(*name, value);
    }
    response.body(Body::from(reply.body.replace("{base}", &inner.base))).unwrap()
}

/// Panics if `text` shows the test key.
pub fn assert_no_key(what: &str, text: &str) {
    assert!(!text.contains(KEY), "the key shows in {what}: {text}");
}
