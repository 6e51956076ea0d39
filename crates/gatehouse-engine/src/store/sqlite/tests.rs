//! Group commit: writes queued while the writer commits form its next group.

use std::sync::mpsc;
use std::sync::Arc;
use std::thread::{self, ThreadId};
use std::time::Duration;

use super::{SqliteStore, StoreOptions};
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
