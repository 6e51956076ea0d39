//! Writes sent without waiting for their replies: the writer's statements
//! whose answer a job does not read (inserting a decision, updating a run,
//! the group's events as it ends) leave at once and are answered together,
//! so a job costs a round trip per read, not per statement.
//!
//! The connection runs requests in order, so a statement sent later (a
//! read, the next write, `COMMIT`) sees every deferred write before it. A
//! deferred write that fails aborts the transaction, so every statement
//! after it fails too. A job's deferred writes are answered with the next
//! job's first read ([`Pipeline::carry`]): when one of them proves refused
//! there, the connection rolls back to the savepoint of the job that sent
//! it (still that job's: the `RELEASE` behind it was refused too), sends
//! again what the running job deferred before that read, and runs the read
//! again (`Conn::wait`); the writer then fails the job before with its own
//! error and keeps the running one. So a refused write still fails its own
//! job only.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A request already sent, waiting for its reply.
pub(super) type Deferred = Pin<Box<dyn Future<Output = Result<u64, tokio_postgres::Error>> + Send>>;

/// How to send a deferred request (again).
pub(super) type Resend = Box<dyn Fn() -> Deferred + Send>;

/// The deferred requests of one connection and the first of them that failed.
#[derive(Default)]
pub(super) struct Pipeline {
    sent: RefCell<Vec<Deferred>>,
    /// How many of `sent`, from the front, the job before the running one
    /// sent: their replies come with the running job's first wait.
    carried: Cell<usize>,
    /// How to send again what the running job deferred while requests were
    /// carried, in order.
    again: RefCell<Vec<Resend>>,
    failed: RefCell<Option<tokio_postgres::Error>>,
    /// A carried request's failure, once its reply was read: the job before
    /// the running one was refused, and its savepoint was rolled back.
    carried_failed: RefCell<Option<tokio_postgres::Error>>,
}

impl Pipeline {
    /// Sends the request `send` makes (its first poll writes it to the
    /// connection's queue) and keeps it until its reply is read; and keeps
    /// `send`, while requests are carried, to send it again.
    pub fn send(&self, send: Resend) {
        let mut request = send();
        let mut context = Context::from_waker(futures_util::task::noop_waker_ref());
        match request.as_mut().poll(&mut context) {
            Poll::Pending => self.sent.borrow_mut().push(request),
            Poll::Ready(Ok(_)) => {}
            Poll::Ready(Err(e)) => self.note(Some(e)),
        }
        if self.carried.get() > 0 {
            self.again.borrow_mut().push(send);
        }
    }

    /// Counts every request sent and not answered as the job before's: the
    /// next wait reads their replies with its own.
    pub fn carry(&self) {
        self.carried.set(self.sent.borrow().len());
        self.again.borrow_mut().clear();
    }

    /// Whether requests of the job before the running one await their replies.
    pub fn carrying(&self) -> bool {
        self.carried.get() > 0
    }

    /// The requests sent and not yet answered, to be settled; how many of
    /// them, from the front, were carried; and how to send again the rest.
    pub fn take(&self) -> (Vec<Deferred>, usize, Vec<Resend>) {
        let sent = std::mem::take(&mut *self.sent.borrow_mut());
        (sent, self.carried.replace(0), std::mem::take(&mut *self.again.borrow_mut()))
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

    /// Keeps the failure of a carried request: the job before was refused.
    pub fn note_carried(&self, failure: tokio_postgres::Error) {
        self.carried_failed.borrow_mut().get_or_insert(failure);
    }

    /// Whether a carried request's failure awaits the writer.
    pub fn carried_failed(&self) -> bool {
        self.carried_failed.borrow().is_some()
    }

    /// The carried request's failure, for the writer to fail the job before with.
    pub fn take_carried_failure(&self) -> Option<tokio_postgres::Error> {
        self.carried_failed.borrow_mut().take()
    }
}

/// Reads the replies of `sent`, in the order they were sent; the first
/// failure, if any, and its place.
pub(super) async fn settle(sent: Vec<Deferred>) -> Option<(usize, tokio_postgres::Error)> {
    let mut first = None;
    for (i, request) in sent.into_iter().enumerate() {
        if let Err(e) = request.await {
            first.get_or_insert((i, e));
        }
    }
    first
}
