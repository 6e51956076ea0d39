//! Who commits a write: the caller when the store is idle, the writer
//! thread when other writes are queued or committing.

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
fn an_idle_store_commits_a_write_on_the_callers_thread_before_returning() {
    let (_dir, store) = store();
    let (tell, answer) = mpsc::channel();
    store.write_then(|_| Ok(()), move |result| tell.send((result.is_ok(), thread::current().id())).unwrap());
    // Answered before `write_then` returned, here: no thread was woken.
    let (ok, on) = answer.try_recv().expect("answered before write_then returned");
    assert!(ok);
    assert_eq!(on, thread::current().id());
    assert_eq!(store.stats().unwrap().write_groups, 1);
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
fn a_runtime_worker_committing_its_own_write_leaves_the_runtime_running() {
    // One worker: if the commit held it, the task releasing the commit
    // could never run, and the write would give up waiting.
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).build().unwrap();
    let (_dir, store) = store();
    let store = Arc::new(store);
    let (started, running) = tokio::sync::oneshot::channel::<()>();
    let (release, hold) = mpsc::channel::<()>();
    let released = runtime.spawn(async move {
        running.await.unwrap();
        release.send(()).unwrap();
    });
    let writer = Arc::clone(&store);
    let answer = runtime.block_on(async move {
        tokio::spawn(async move {
            let (tell, told) = tokio::sync::oneshot::channel();
            writer.write_then(
                move |_| {
                    started.send(()).unwrap();
                    Ok(hold.recv_timeout(Duration::from_secs(10)).is_ok())
                },
                move |result| tell.send(result).unwrap(),
            );
            told.await.unwrap()
        })
        .await
        .unwrap()
    });
    assert!(answer.unwrap(), "the runtime ran the releasing task while the write committed");
    runtime.block_on(released).unwrap();
}
