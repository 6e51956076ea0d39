//! Writes sent without waiting for their replies: the writer's statements
//! whose answer a job does not read (inserting a decision, updating a run,
//! the group's events as it ends) leave at once and are answered together,
//! so a job costs a round trip per read, not per statement.
//!
//! The connection runs requests in order, so a statement sent later (a
//! read, the next write, `COMMIT`) sees every deferred write before it. A
//! deferred write that fails aborts the transaction, so every statement
//! after it fails too; the writer settles the deferred replies before it
//! ends a job ([`Pipeline`] is checked by `Conn::flush`), which is how the
//! failure reaches the job that caused it, and only that job's savepoint is
//! rolled back.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A request already sent, waiting for its reply.
pub(super) type Deferred = Pin<Box<dyn Future<Output = Result<u64, tokio_postgres::Error>> + Send>>;

/// The deferred requests of one connection and the first of them that failed.
#[derive(Default)]
pub(super) struct Pipeline {
    sent: RefCell<Vec<Deferred>>,
    failed: RefCell<Option<tokio_postgres::Error>>,
}

impl Pipeline {
    /// Sends `request` (its first poll writes it to the connection's queue)
    /// and keeps it until its reply is read.
    pub fn send(&self, mut request: Deferred) {
        let mut context = Context::from_waker(futures_util::task::noop_waker_ref());
        match request.as_mut().poll(&mut context) {
            Poll::Pending => self.sent.borrow_mut().push(request),
            Poll::Ready(Ok(_)) => {}
            Poll::Ready(Err(e)) => self.note(Some(e)),
        }
    }

    /// The requests sent and not yet answered, to be settled.
    pub fn take(&self) -> Vec<Deferred> {
        std::mem::take(&mut *self.sent.borrow_mut())
    }

    /// Whether any request waits for its reply.
    pub fn is_empty(&self) -> bool {
        self.sent.borrow().is_empty()
    }

    /// Keeps `failure` unless an earlier one is kept: the first failure is
    /// the cause, the ones after it only say the transaction was aborted.
    pub fn note(&self, failure: Option<tokio_postgres::Error>) {
        if let Some(e) = failure {
            self.failed.borrow_mut().get_or_insert(e);
        }
    }

    /// The first deferred failure since the last call, if any.
    pub fn failure(&self) -> Option<tokio_postgres::Error> {
        self.failed.borrow_mut().take()
    }
}

/// Reads the replies of `sent`, in the order they were sent; the first failure, if any.
pub(super) async fn settle(sent: Vec<Deferred>) -> Option<tokio_postgres::Error> {
    let mut first = None;
    for request in sent {
        if let Err(e) = request.await {
            first.get_or_insert(e);
        }
    }
    first
}
