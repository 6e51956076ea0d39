//! Client connections, for HTTP and HTTPS alike: the accept loop, which
//! backs off when accepting fails (out of file descriptors) instead of
//! spinning; a cap on connections served at once, past which a client gets
//! an immediate 503 with the API's JSON error body; a deadline for a
//! request's headers and for an idle connection, so slow or silent clients
//! cannot hold connections; and the soft open-file limit raised to the hard
//! one at start.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::http::{header, Request, Response, StatusCode};
use axum::response::IntoResponse;
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use crate::error::{ApiError, ApiErrorCode};

/// How many connections the server serves and how long it waits on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Connections served at once; a client past them gets an immediate 503.
    /// Lowered at start to what the open-file limit allows.
    pub max_connections: usize,
    /// How long a client has to send a request's headers (and, over HTTPS,
    /// to finish its handshake), counted from connecting or from the end of
    /// its previous response; an HTTP/1.1 connection idle that long is closed.
    pub header_read_timeout: Duration,
    /// How long a connection with no request in flight stays open
    /// (HTTP/2 connections between streams, say).
    pub idle_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            max_connections: 4096,
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
        }
    }
}

/// Connections answered 503 at once; past these, a connection is closed
/// unanswered, so a flood cannot spend every file descriptor on refusals.
const REFUSAL_SLOTS: usize = 64;
/// The longest a refused connection is kept to deliver its 503.
const REFUSAL_LIMIT: Duration = Duration::from_secs(2);
/// After an idle connection is asked to close, how long it may take.
const CLOSING_GRACE: Duration = Duration::from_secs(1);
/// The longest wait between failed accepts.
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);
/// How often failing accepts are reported in the log.
const ACCEPT_REPORT_EVERY: Duration = Duration::from_secs(30);

/// Raises the soft open-file limit (`RLIMIT_NOFILE`) to the hard limit, as
/// a server holding a connection per client needs, and returns the soft
/// limit now in force (`None` where it is unknown or unlimited).
pub fn raise_open_file_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        use rustix::process::{getrlimit, setrlimit, Resource};
        let limit = getrlimit(Resource::Nofile);
        if limit.current.is_some() && limit.current != limit.maximum {
            let raised = rustix::process::Rlimit { current: limit.maximum, maximum: limit.maximum };
            if let Err(e) = setrlimit(Resource::Nofile, raised) {
                // macOS refuses an unlimited soft limit; the current one stays.
                tracing::debug!(error = %e, "cannot raise the open-file limit");
            }
        }
        getrlimit(Resource::Nofile).current
    }
    #[cfg(not(unix))]
    None
}

impl ConnectionLimits {
    /// These limits with `max_connections` lowered so that connections
    /// cannot use up `open_files` (the soft limit): a share stays for the
    /// database, logs, webhooks and refused clients.
    pub fn within(self, open_files: Option<u64>) -> Self {
        let Some(open_files) = open_files.and_then(|n| usize::try_from(n).ok()) else { return self };
        let reserve = (open_files / 4).min(256) + REFUSAL_SLOTS.min(open_files / 8);
        let usable = open_files.saturating_sub(reserve).max(1);
        if self.max_connections > usable {
            tracing::warn!(
                requested = self.max_connections,
                usable,
                open_files,
                "the open-file limit allows fewer connections than --max-connections; raise `ulimit -n` for more"
            );
        }
        Self { max_connections: self.max_connections.min(usable), ..self }
    }
}

/// Serves `app` on `listener` (over TLS with `tls`) until the task is
/// aborted. Each connection runs on a task of its own.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    tls: Option<TlsAcceptor>,
    limits: ConnectionLimits,
) -> io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let refusals = Arc::new(Semaphore::new(REFUSAL_SLOTS));
    let mut backoff = Duration::ZERO;
    // Failed accepts since the last report, and when that was: one line per
    // `ACCEPT_REPORT_EVERY` however long the descriptors stay exhausted.
    let (mut failures, mut reported): (u64, Option<Instant>) = (0, None);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                // Out of file descriptors and the like: wait, longer each time, rather than spin.
                failures += 1;
                if reported.is_none_or(|at| at.elapsed() >= ACCEPT_REPORT_EVERY) {
                    tracing::warn!(error = %e, failures, "cannot accept connections; retrying with backoff");
                    (failures, reported) = (0, Some(Instant::now()));
                }
                backoff = (backoff * 2).clamp(Duration::from_millis(5), MAX_ACCEPT_BACKOFF);
                tokio::time::sleep(backoff).await;
                continue;
            }
        };
        backoff = Duration::ZERO;
        let _ = stream.set_nodelay(true);
        let admitted = match Arc::clone(&slots).try_acquire_owned() {
            Ok(slot) => Admitted::Served(slot),
            Err(_) => match Arc::clone(&refusals).try_acquire_owned() {
                Ok(slot) => Admitted::Refused(slot),
                Err(_) => {
                    tracing::debug!(%peer, "too many connections; closed unanswered");
                    continue;
                }
            },
        };
        let (tls, app) = (tls.clone(), app.clone());
        tokio::spawn(async move {
            match tls {
                None => connection(stream, peer, app, limits, admitted).await,
                Some(acceptor) => match tokio::time::timeout(limits.header_read_timeout, acceptor.accept(stream)).await
                {
                    Ok(Ok(stream)) => connection(stream, peer, app, limits, admitted).await,
                    Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                    Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                },
            }
        });
    }
}

/// A connection under the cap, or one to refuse; each holds its slot.
enum Admitted {
    Served(OwnedSemaphorePermit),
    Refused(OwnedSemaphorePermit),
}

async fn connection<S>(stream: S, peer: SocketAddr, app: Router, limits: ConnectionLimits, admitted: Admitted)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout);
    let io = TokioIo::new(stream);
    match admitted {
        Admitted::Served(_slot) => {
            let activity = Arc::new(Activity::new(limits));
            let service = tower::service_fn({
                let activity = Arc::clone(&activity);
                move |request: Request<hyper::body::Incoming>| {
                    let in_flight = Activity::begin(&activity);
                    let app = app.clone();
                    async move {
                        let response = app.oneshot(request).await?;
                        Ok::<_, std::convert::Infallible>(
                            response.map(|body| Body::new(Tracked { body, _in_flight: in_flight })),
                        )
                    }
                }
            });
            let conn = builder.serve_connection_with_upgrades(io, TowerToHyperService::new(service));
            tokio::pin!(conn);
            tokio::select! {
                served = conn.as_mut() => {
                    if let Err(e) = served {
                        tracing::debug!(%peer, error = %e, "connection ended with an error");
                    }
                    return;
                }
                () = activity.idle() => conn.as_mut().graceful_shutdown(),
            }
            // Nothing is in flight: the close only flushes what was written.
            let _ = tokio::time::timeout(CLOSING_GRACE, conn).await;
        }
        Admitted::Refused(_slot) => {
            builder.http1().keep_alive(false);
            let service = tower::service_fn(|_: Request<hyper::body::Incoming>| async {
                Ok::<_, std::convert::Infallible>(over_capacity())
            });
            let conn = builder.serve_connection(io, TowerToHyperService::new(service));
            let _ = tokio::time::timeout(REFUSAL_LIMIT, conn).await;
        }
    }
}

/// The answer past the connection cap.
fn over_capacity() -> Response<Body> {
    let error = ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        ApiErrorCode::Unavailable,
        "the server is serving as many connections as it may; retry shortly",
    );
    let mut response = error.into_response();
    response.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
    response.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
    response
}

/// Whether a connection has requests in flight, and since when it has had
/// none: a request counts from its headers to the end of its response body
/// (a long poll's wait, an event stream's life).
struct Activity {
    limits: ConnectionLimits,
    state: Mutex<ActivityState>,
    /// Wakes [`Activity::idle`] when the last request in flight ends.
    quiet: tokio::sync::Notify,
}

struct ActivityState {
    in_flight: usize,
    /// When the connection is closed if no request starts; `None` while one is in flight.
    idle_deadline: Option<Instant>,
}

impl Activity {
    fn new(limits: ConnectionLimits) -> Self {
        // Until its first request, a connection gets the headers' deadline.
        let first = Instant::now() + limits.header_read_timeout;
        let state = Mutex::new(ActivityState { in_flight: 0, idle_deadline: Some(first) });
        Self { limits, state, quiet: tokio::sync::Notify::new() }
    }

    fn begin(this: &Arc<Self>) -> InFlight {
        let mut state = this.state.lock().unwrap_or_else(|e| e.into_inner());
        state.in_flight += 1;
        state.idle_deadline = None;
        InFlight(Arc::clone(this))
    }

    /// Resolves once the connection has been idle past its deadline.
    async fn idle(&self) {
        loop {
            // Registered before the state is read, so an end in between is not missed.
            let quiet = self.quiet.notified();
            let deadline = self.state.lock().unwrap_or_else(|e| e.into_inner()).idle_deadline;
            match deadline {
                Some(deadline) if deadline <= Instant::now() => return,
                // A request may start and end meanwhile, moving the deadline: look again then.
                Some(deadline) => tokio::select! {
                    () = tokio::time::sleep_until(deadline) => {}
                    () = quiet => {}
                },
                None => quiet.await,
            }
        }
    }
}

/// A request in flight; dropped with its response body.
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut state = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        state.in_flight -= 1;
        if state.in_flight == 0 {
            state.idle_deadline = Some(Instant::now() + self.0.limits.idle_timeout);
            self.0.quiet.notify_waiters();
        }
    }
}

/// A response body that keeps its request counted in flight until it ends.
struct Tracked {
    body: Body,
    _in_flight: InFlight,
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_cap_leaves_file_descriptors_for_everything_else() {
        let limits = ConnectionLimits { max_connections: 4096, ..ConnectionLimits::default() };
        assert_eq!(limits.within(None).max_connections, 4096, "no known limit, no change");
        assert_eq!(limits.within(Some(1_048_576)).max_connections, 4096);
        assert_eq!(limits.within(Some(1024)).max_connections, 1024 - 256 - 64);
        assert_eq!(limits.within(Some(64)).max_connections, 64 - 16 - 8);
    }
}
