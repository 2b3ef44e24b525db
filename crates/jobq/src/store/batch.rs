//! How every store cuts a batch: into rounds in which no job appears twice (so each answer names one
//! input), and into statements bounded by rows and bytes.

use std::collections::HashMap;
use std::future::Future;

use super::{Finish, StoreError};
use crate::job::{Job, NewJob};

/// Splits a batch into rounds in which no job id appears twice, as indexes into the batch in input
/// order: the n-th occurrence of an id goes in round n. A statement reports what it applied by job id,
/// so two entries for one job in one statement could not be told apart (a worker whose first attempt
/// was rescued and who claimed the job again holds a stale and a current lease on it; an enqueue may
/// name an id twice). Run one round after the other and every entry gets its own answer: a repeated
/// lease is answered as the job stands after its first occurrence. Nearly every batch is one round.
pub(crate) fn rounds_by_id<'a, T>(items: &'a [T], id: impl Fn(&'a T) -> &'a str) -> Vec<Vec<usize>> {
    let mut occurrences: HashMap<&str, usize> = HashMap::with_capacity(items.len());
    let mut rounds: Vec<Vec<usize>> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let n = occurrences.entry(id(item)).or_insert(0);
        if rounds.len() == *n {
            rounds.push(Vec::new());
        }
        rounds[*n].push(i);
        *n += 1;
    }
    rounds
}

/// Applies a batch of outcomes in two groups, each by its own writer: those that spawn children or
/// await them ([`Finish::spawns`]), which a store writes with their children, and the rest, which
/// it writes as ever (first, and not at all when there are none). Answers per input, in input order.
pub(crate) async fn finish_spawning_apart<P, PF, S, SF>(
    finishes: &[Finish],
    plain: P,
    spawning: S,
) -> Result<Vec<bool>, StoreError>
where
    P: FnOnce(Vec<Finish>) -> PF,
    PF: Future<Output = Result<Vec<bool>, StoreError>>,
    S: FnOnce(Vec<Finish>) -> SF,
    SF: Future<Output = Result<Vec<bool>, StoreError>>,
{
    let (own, rest): (Vec<usize>, Vec<usize>) = (0..finishes.len()).partition(|&i| finishes[i].spawns());
    let pick = |at: &[usize]| -> Vec<Finish> { at.iter().map(|&i| finishes[i].clone()).collect() };
    let mut applied = vec![false; finishes.len()];
    if !rest.is_empty() {
        for (&i, ok) in rest.iter().zip(plain(pick(&rest)).await?) {
            applied[i] = ok;
        }
    }
    for (&i, ok) in own.iter().zip(spawning(pick(&own)).await?) {
        applied[i] = ok;
    }
    Ok(applied)
}

/// A claim's queues, each once, in the order named.
pub(crate) fn distinct_queues(queues: &[String]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::with_capacity(queues.len());
    for q in queues {
        if !out.contains(&q.as_str()) {
            out.push(q);
        }
    }
    out
}

/// Sorts jobs in claim order, smallest (priority, run_at, id) first, as a claim hands them out (for
/// answers that come back unordered or merged from several queues).
pub(crate) fn sort_in_claim_order(jobs: &mut [Job]) {
    jobs.sort_by(|a, b| (a.priority, a.run_at, &a.id).cmp(&(b.priority, b.run_at, &b.id)));
}

/// What a job weighs in a statement: its payload and meta, roughly as the wire carries them.
pub(crate) fn job_bytes(job: &NewJob) -> usize {
    job.payload.get().len() + job.meta.iter().map(|(k, v)| k.len() + v.len() + 6).sum::<usize>()
}

/// Splits the jobs at `indexes` into runs of at most `max_rows` jobs and about `max_bytes` bytes
/// (`bytes_of` an index, [`job_bytes`] of its job); a single larger job still gets a run of its own.
pub(crate) fn chunks(
    indexes: &[usize],
    max_rows: usize,
    max_bytes: usize,
    bytes_of: impl Fn(usize) -> usize,
) -> Vec<&[usize]> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (n, &i) in indexes.iter().enumerate() {
        let size = bytes_of(i);
        if n > start && (n - start == max_rows || bytes + size > max_bytes) {
            out.push(&indexes[start..n]);
            (start, bytes) = (n, 0);
        }
        bytes += size;
    }
    if start < indexes.len() {
        out.push(&indexes[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::job::{JobSpec, Limits};
    use crate::time::UnixMillis;

    #[test]
    fn a_repeated_id_goes_to_the_next_round() {
        let ids = ["a", "b", "a", "c", "a", "b"];
        assert_eq!(rounds_by_id(&ids, |s| s), vec![vec![0, 1, 3], vec![2, 5], vec![4]]);
        assert!(rounds_by_id(&[] as &[&str], |s| s).is_empty());
    }

    #[test]
    fn chunks_are_bounded_by_rows_and_bytes() {
        let job = |payload_bytes: usize| {
            let spec = JobSpec::new("t", Value::String("x".repeat(payload_bytes - 2)));
            NewJob::validate(spec, UnixMillis(0), &Limits::default()).unwrap()
        };
        let jobs: Vec<NewJob> = [10, 10, 10, 10, 10, 40, 10].into_iter().map(job).collect();
        let all: Vec<usize> = (0..jobs.len()).collect();
        let sizes = |max_rows, max_bytes| -> Vec<usize> {
            chunks(&all, max_rows, max_bytes, |i| job_bytes(&jobs[i]))
                .iter()
                .map(|c| c.len())
                .collect()
        };
        assert_eq!(sizes(3, 1_000), [3, 3, 1]);
        assert_eq!(sizes(100, 30), [3, 2, 1, 1]);
        assert!(chunks(&[], 3, 30, |_| 1).is_empty());
    }
}
