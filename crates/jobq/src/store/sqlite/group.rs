//! Group commit for SQLite's one writer: producers of one process that enqueue while another commit
//! is under way share the next commit instead of each waiting for one of their own.
//!
//! SQLite commits one transaction at a time, and a commit costs about the same for one row as for a
//! hundred. A producer that finds the gate free writes its jobs at once, alone, in one statement: a
//! lone producer pays nothing for grouping. One that finds it taken leaves its jobs in [`Pending`]
//! and waits for the gate; whoever takes the gate next (the first waiter, or a producer that just
//! arrived) writes every job left there in one statement and hands each producer its answers before
//! it lets the gate go. So no producer waits longer than it would alone: it would have waited for
//! the commit under way and then made its own, and it waits for the commit under way and then one
//! that carries its jobs with others'.
//!
//! Only plain batches are grouped (no unique key, no id twice, see [`is_plain`]): their answer is
//! `Created` for every job unless an id exists already. When a group meets such an id, or fails in
//! any way, each of its batches is written again on its own, so every producer gets the answer or the
//! error its jobs alone would get.

use std::sync::Mutex as SyncMutex;

use tokio::sync::{OwnedMutexGuard, oneshot};

use super::SqliteStore;
use crate::job::NewJob;
use crate::store::sql::{all_created, is_plain};
use crate::store::{Enqueued, StoreError};

/// Batches left for the next writer, each with where its answer goes.
#[derive(Debug, Default)]
pub(super) struct Pending {
    batches: SyncMutex<Vec<Waiting>>,
}

#[derive(Debug)]
struct Waiting {
    jobs: Vec<NewJob>,
    answer: oneshot::Sender<Result<Vec<Enqueued>, StoreError>>,
}

impl Pending {
    fn take(&self) -> Vec<Waiting> {
        std::mem::take(&mut *self.batches.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn leave(&self, jobs: &[NewJob], answer: oneshot::Sender<Result<Vec<Enqueued>, StoreError>>) {
        let waiting = Waiting {
            jobs: jobs.to_vec(),
            answer,
        };
        self.batches.lock().unwrap_or_else(|e| e.into_inner()).push(waiting);
    }

    fn is_empty(&self) -> bool {
        self.batches.lock().unwrap_or_else(|e| e.into_inner()).is_empty()
    }
}

impl SqliteStore {
    /// Enqueues a plain batch (see the module's text): in a commit of its own when the gate is free,
    /// else in the next commit, with whatever other producers leave meanwhile.
    pub(super) async fn enqueue_grouped(&self, jobs: &[NewJob]) -> Result<Vec<Enqueued>, StoreError> {
        if let Ok(_turn) = self.gate.try_lock()
            && self.pending.is_empty()
        {
            return self.enqueue_alone(jobs).await;
        }
        let (answer, mut mine) = oneshot::channel();
        self.pending.leave(jobs, answer);
        tokio::select! {
            biased;
            answered = &mut mine => answered.unwrap_or_else(|_| Err(abandoned())),
            turn = self.gate.clone().lock_owned() => {
                // A writer hands out its answers before it lets the gate go: when ours is not there,
                // our jobs are still pending, and this task writes them.
                if let Ok(answered) = mine.try_recv() {
                    return answered;
                }
                // On a task of its own, so that a producer that stops waiting (a request cancelled)
                // never leaves the others' jobs half-handled.
                let store = self.clone();
                tokio::spawn(async move { store.write_pending(turn).await });
                mine.await.unwrap_or_else(|_| Err(abandoned()))
            }
        }
    }

    /// Writes every pending batch, in one commit where they can share one, answers each, and only
    /// then lets the gate go.
    async fn write_pending(&self, _turn: OwnedMutexGuard<()>) {
        let group = self.pending.take();
        let mut group = match <[Waiting; 1]>::try_from(group) {
            Ok([one]) => {
                let _ = one.answer.send(self.enqueue_alone(&one.jobs).await);
                return;
            }
            Err(group) => group,
        };
        // The batches' jobs moved into one list, each batch then a range of it.
        let mut all: Vec<NewJob> = Vec::with_capacity(group.iter().map(|w| w.jobs.len()).sum());
        let mut ranges = Vec::with_capacity(group.len());
        for waiting in &mut group {
            ranges.push(all.len()..all.len() + waiting.jobs.len());
            all.append(&mut waiting.jobs);
        }
        let shared = is_plain(&all) && self.insert_all(&all).is_ok();
        for (waiting, range) in group.into_iter().zip(ranges) {
            let jobs = &all[range];
            let answer = if shared {
                Ok(all_created(jobs))
            } else {
                self.enqueue_alone(jobs).await
            };
            let _ = waiting.answer.send(answer);
        }
    }
}

/// A writer that took a batch and ended before answering it: its task panicked.
fn abandoned() -> StoreError {
    StoreError::query(
        super::KIND,
        "enqueue",
        "the commit that carried these jobs ended without an answer; whether they were written is unknown",
    )
}
