//! Group commit: writes queued while the writer commits form its next
//! group; a write that finds the store idle commits on its caller's thread,
//! and never ahead of writes already queued.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::{self, ThreadId};
use std::time::Duration;

use super::{hold, SqliteStore, StoreOptions};
use crate::store::Store;

fn store() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::open(dir.path().join("gatehouse.db"), StoreOptions::default()).expect("store");
    (dir, store)
}

/// The thread `done` ran on, once the write has been answered.
fn committed_on(answer: &mpsc::Receiver<ThreadId>) -> ThreadId {
    answer.recv_timeout(Duration::from_secs(10)).expect("the write was answered")
}

#[test]
fn writes_arriving_while_one_commits_queue_and_commit_together_on_the_writer() {
    let (_dir, store) = store();
    let store = Arc::new(store);
    let (release, hold) = mpsc::channel::<()>();
    let (started, running) = mpsc::channel::<()>();
    let holder = {
        let store = Arc::clone(&store);
        thread::spawn(move || {
            store.write(move |_| {
                started.send(()).unwrap();
                hold.recv_timeout(Duration::from_secs(10)).expect("released");
                Ok(())
            })
        })
    };
    running.recv().unwrap();
    let (tell, answer) = mpsc::channel();
    for _ in 0..2 {
        let tell = tell.clone();
        store.write_then(|_| Ok(()), move |_| tell.send(thread::current().id()).unwrap());
    }
    assert!(answer.try_recv().is_err(), "a write went past the one committing");
    assert_eq!(store.stats().unwrap().writes_in_flight, 3);
    release.send(()).unwrap();
    holder.join().unwrap().unwrap();
    let (first, second) = (committed_on(&answer), committed_on(&answer));
    assert_eq!(first, second, "both queued writes were answered by one thread");
    assert_ne!(first, thread::current().id());
    // The holder's group, then one group for the two queued writes.
    assert_eq!(store.stats().unwrap().write_groups, 2);
}

#[test]
fn a_write_finding_the_store_idle_commits_on_its_callers_thread_before_returning() {
    let (_dir, store) = store();
    let (tell, answer) = mpsc::channel();
    store.write_then(
        |_| Ok(()),
        move |result: crate::Result<()>| tell.send((thread::current().id(), result.is_ok())).unwrap(),
    );
    let (on, committed) = answer.try_recv().expect("answered before write_then returned");
    assert!(committed);
    assert_eq!(on, thread::current().id(), "committed by the caller, not handed to the writer thread");
    assert_eq!(store.stats().unwrap().write_groups, 1);
}

/// The ops of `a_write_finding_the_connection_free...`: each writes its
/// name, and a held one then waits for its release while it holds the
/// write connection.
struct Log(Arc<Mutex<Vec<&'static str>>>);

impl Log {
    fn op(
        &self,
        name: &'static str,
    ) -> impl FnOnce(&mut dyn crate::store::WriteTx) -> crate::Result<()> + Send + 'static {
        let order = Arc::clone(&self.0);
        move |_| {
            order.lock().unwrap().push(name);
            Ok(())
        }
    }

    /// `name`'s op, telling `started` once it runs and holding on until `release` sends.
    fn held(
        &self,
        name: &'static str,
    ) -> (
        impl FnOnce(&mut dyn crate::store::WriteTx) -> crate::Result<()> + Send + 'static,
        mpsc::Receiver<()>,
        mpsc::Sender<()>,
    ) {
        let (release, hold) = mpsc::channel::<()>();
        let (started, running) = mpsc::channel::<()>();
        let op = self.op(name);
        let held = move |tx: &mut dyn crate::store::WriteTx| {
            op(tx)?;
            started.send(()).unwrap();
            hold.recv_timeout(Duration::from_secs(10)).expect("released");
            Ok(())
        };
        (held, running, release)
    }
}

#[test]
fn a_write_soon_after_a_commit_queues_for_the_writer_thread() {
    let (_dir, store) = store();
    hold(&store.connection).inline_after = Duration::from_secs(3600);
    let (tell, answer) = mpsc::channel();
    for _ in 0..2 {
        let tell = tell.clone();
        store.write_then(|_| Ok(()), move |_: crate::Result<()>| tell.send(thread::current().id()).unwrap());
    }
    assert_eq!(committed_on(&answer), thread::current().id(), "the first write found the store idle");
    assert_ne!(committed_on(&answer), thread::current().id(), "the second came under the idle time after the first");
}

#[test]
fn a_write_finding_the_connection_free_still_queues_behind_writes_already_waiting() {
    let (_dir, store) = store();
    // Idle the moment a commit ends: only the queue keeps `fourth` behind `third`.
    hold(&store.connection).inline_after = Duration::ZERO;
    let store = Arc::new(store);
    let log = Log(Arc::new(Mutex::new(Vec::new())));
    // `first` commits on its own thread and holds the connection, so `second` queues for the writer thread.
    let (first, first_running, release_first) = log.held("first");
    let holder = {
        let store = Arc::clone(&store);
        thread::spawn(move || store.write(first))
    };
    first_running.recv().unwrap();
    let (second, second_running, release_second) = log.held("second");
    let (fourth, later) = (log.op("fourth"), Arc::clone(&store));
    let (tell_fourth, fourth_done) = mpsc::channel();
    store.write_then(second, move |_: crate::Result<()>| {
        // On the writer thread, the connection free again and `third`
        // still in the queue: `fourth` must wait behind it.
        later.write_then(fourth, move |r| tell_fourth.send(r.is_ok()).unwrap());
    });
    release_first.send(()).unwrap();
    holder.join().unwrap().unwrap();
    second_running.recv().unwrap();
    store.write_then(log.op("third"), |_| {});
    release_second.send(()).unwrap();
    assert!(fourth_done.recv_timeout(Duration::from_secs(10)).unwrap());
    assert_eq!(*log.0.lock().unwrap(), ["first", "second", "third", "fourth"]);
}
