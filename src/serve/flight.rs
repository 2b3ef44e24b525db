//! One count for the requests that ask the same question at once. `GET /api/v1/stats`, `/queues` and
//! `GET /metrics` count every job of the store by queue and status (a pass over the whole jobs table
//! on the SQL stores, 0.1–0.3 s at a million jobs), and clients that ask together would each run their
//! own count beside the others, on the cores the lists and shows also need. Here they share one.
//!
//! The rule: **an answer is always counted after its request arrived**, never taken from a count that
//! was already under way (nor from a cache). Requests that arrive while a count of the same question
//! runs join the next round, which starts as soon as that count ends and answers all of them; so a
//! question is counted at most once at a time, and a client that changed something and then asks
//! (the dashboard refreshing after an action) always sees its change. What sharing costs a request is
//! the wait for the count under way to end: at most one count more than it would have waited alone.
//! It must never do more than count: a round's answer goes to requests that did not start it.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;

/// The rounds of each question (`K`) in progress, with answers of type `V`.
pub struct Flights<K, V> {
    keys: Mutex<HashMap<K, Slot<V>>>,
}

/// One question's rounds.
struct Slot<V> {
    /// Held by the round that counts: one count of the question at a time.
    turn: Arc<tokio::sync::Mutex<()>>,
    /// The round requests arriving now join; it has not started counting.
    open: Option<Arc<OnceCell<V>>>,
}

impl<K: Eq + Hash + Clone, V: Clone> Default for Flights<K, V> {
    fn default() -> Self {
        Flights {
            keys: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Eq + Hash + Clone, V: Clone> Flights<K, V> {
    /// The answer to `key`, from a count that started after this call: the one `count` makes, or the
    /// one of another caller who asked the same question after the last count began.
    pub async fn run<F, Fut>(&self, key: K, count: F) -> V
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = V>,
    {
        let ticket = self.join(key);
        ticket
            .round
            .get_or_init(|| async {
                // Joiners keep arriving while this waits for the count under way to end.
                let _turn = ticket.turn.lock().await;
                self.close(&ticket.key, &ticket.round);
                count().await
            })
            .await
            .clone()
        // If the caller that started the count is dropped mid-way (its client went away), the
        // `OnceCell` lets the next member of the round count instead, under the same rule.
    }

    /// Joins the open round of `key`, opening one if none is.
    fn join(&self, key: K) -> Ticket<'_, K, V> {
        let mut keys = self.keys.lock().unwrap_or_else(|p| p.into_inner());
        let slot = keys.entry(key.clone()).or_insert_with(|| Slot {
            turn: Arc::default(),
            open: None,
        });
        let round = slot.open.get_or_insert_with(Arc::default).clone();
        Ticket {
            flights: self,
            key,
            round,
            turn: slot.turn.clone(),
        }
    }

    /// Closes `round` to new members: it is about to count.
    fn close(&self, key: &K, round: &Arc<OnceCell<V>>) {
        let mut keys = self.keys.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(slot) = keys.get_mut(key)
            && slot.open.as_ref().is_some_and(|open| Arc::ptr_eq(open, round))
        {
            slot.open = None;
        }
    }

    /// How many callers wait in the open round of `key` (for tests: a condition to wait on).
    #[cfg(test)]
    fn waiting(&self, key: &K) -> usize {
        let keys = self.keys.lock().unwrap();
        keys.get(key)
            .and_then(|slot| slot.open.as_ref())
            .map_or(0, |open| Arc::strong_count(open) - 1)
    }

    /// Questions with a round in progress.
    #[cfg(test)]
    fn questions(&self) -> usize {
        self.keys.lock().unwrap().len()
    }
}

/// A caller's membership of a round; the last one of a question to leave removes its slot, so
/// questions asked once (any list of queues) do not pile up.
struct Ticket<'a, K: Eq + Hash + Clone, V: Clone> {
    flights: &'a Flights<K, V>,
    key: K,
    round: Arc<OnceCell<V>>,
    turn: Arc<tokio::sync::Mutex<()>>,
}

impl<K: Eq + Hash + Clone, V: Clone> Drop for Ticket<'_, K, V> {
    fn drop(&mut self) {
        let mut keys = self.flights.keys.lock().unwrap_or_else(|p| p.into_inner());
        // Tickets are made and dropped under this lock, so the counts below are exact: the slot's own
        // reference plus this ticket's means no one else asks this question now.
        if keys
            .get(&self.key)
            .is_some_and(|slot| Arc::strong_count(&slot.turn) == 2)
        {
            keys.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::sync::Semaphore;

    use super::*;

    /// Waits until `condition` holds, yielding to the runtime in between (no sleeps: every step the
    /// condition waits for is a task of this runtime getting its turn).
    async fn until(mut condition: impl FnMut() -> bool) {
        for _ in 0..100_000 {
            if condition() {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("the condition never held");
    }

    /// A count that numbers itself and waits at `gate` before it answers.
    async fn numbered(calls: &AtomicUsize, gate: &Semaphore) -> usize {
        let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
        gate.acquire().await.unwrap().forget();
        n
    }

    /// Flights of numbered counts that wait at a gate, and callers that ask for `"all"` in tasks.
    struct Counted {
        flights: Arc<Flights<&'static str, usize>>,
        calls: Arc<AtomicUsize>,
        gate: Arc<Semaphore>,
    }

    impl Default for Counted {
        /// A closed gate: each count waits for a permit.
        fn default() -> Self {
            Counted {
                flights: Arc::default(),
                calls: Arc::default(),
                gate: Arc::new(Semaphore::new(0)),
            }
        }
    }

    impl Counted {
        fn ask(&self) -> tokio::task::JoinHandle<usize> {
            let (flights, calls, gate) = (self.flights.clone(), self.calls.clone(), self.gate.clone());
            tokio::spawn(async move { flights.run("all", || numbered(&calls, &gate)).await })
        }
    }

    #[tokio::test]
    async fn callers_arriving_during_a_count_share_the_next_one() {
        let counted = Counted::default();
        let (flights, calls, gate) = (&counted.flights, &counted.calls, &counted.gate);
        let ask = || counted.ask();
        let first = ask();
        until(|| calls.load(Ordering::SeqCst) == 1).await;
        let later: Vec<_> = (0..5).map(|_| ask()).collect();
        until(|| flights.waiting(&"all") == 5).await;
        // Nobody joins a count under way: the five wait for the next round, which waits for the turn.
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        gate.add_permits(1);
        assert_eq!(first.await.unwrap(), 1);
        until(|| calls.load(Ordering::SeqCst) == 2).await;
        gate.add_permits(1);
        for task in later {
            assert_eq!(
                task.await.unwrap(),
                2,
                "the five share the count that began after they asked"
            );
        }
        assert_eq!(calls.load(Ordering::SeqCst), 2, "two counts for six callers");
        assert_eq!(flights.questions(), 0, "nothing kept once nobody asks");
    }

    #[tokio::test]
    async fn different_questions_count_apart() {
        let flights = Flights::<&str, &str>::default();
        let (a, b) = tokio::join!(flights.run("a", || async { "a" }), flights.run("b", || async { "b" }));
        assert_eq!((a, b), ("a", "b"));
        assert_eq!(flights.questions(), 0);
    }

    #[tokio::test]
    async fn a_round_whose_counting_caller_leaves_is_counted_by_another() {
        let counted = Counted::default();
        let (flights, calls, gate) = (&counted.flights, &counted.calls, &counted.gate);
        let ask = || counted.ask();
        let leaving = ask();
        until(|| calls.load(Ordering::SeqCst) == 1).await;
        let staying = ask();
        until(|| flights.waiting(&"all") == 1).await;
        // The first caller's client goes away mid-count: the turn passes to the next round.
        leaving.abort();
        assert!(leaving.await.unwrap_err().is_cancelled());
        until(|| calls.load(Ordering::SeqCst) == 2).await;
        gate.add_permits(1);
        assert_eq!(staying.await.unwrap(), 2);
        assert_eq!(flights.questions(), 0);
    }
}
