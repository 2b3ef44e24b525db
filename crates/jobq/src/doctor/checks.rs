//! The doctor's judgement, as pure functions of the facts a store gave ([`Facts`]) and the settings
//! it judges by ([`Doctor`]): one function per kind of finding, each saying what is wrong and what to
//! do. Nothing here reads a store or a clock.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::{Doctor, Facts};
use crate::job::Job;
use crate::store::{Finding, Severity, rescues};
use crate::time::format_duration;
use crate::worker::rescue_interval;

/// Every finding, errors first, then in the order the checks run.
pub fn findings(facts: &Facts, doctor: &Doctor) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(stuck_running(facts, doctor));
    out.extend(overdue_waiting(facts, doctor));
    out.extend(late_ready(facts, doctor));
    out.extend(often_rescued(facts, doctor));
    out.extend(stranded(facts, doctor));
    out.extend(long_pauses(facts, doctor));
    out.extend(dead_letters(facts, doctor));
    out.extend(facts.store.iter().cloned());
    out.sort_by_key(|f| f.severity);
    out
}

/// The first few ids of some jobs, by id.
fn sample(jobs: &[&Job], n: usize) -> Vec<String> {
    let mut ids: Vec<String> = jobs.iter().map(|j| j.id.to_string()).collect();
    ids.sort();
    ids.truncate(n);
    ids
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Running jobs whose last sign of life is older than `stale_after` and a rescue sweep (every live
/// worker sweeps at least that often): no worker is alive to take them back, or the sweeps fail.
fn stuck_running(facts: &Facts, doctor: &Doctor) -> Option<Finding> {
    let grace = doctor.stale_after + rescue_interval(doctor.stale_after);
    let cutoff = facts.now.minus(grace);
    let stuck: Vec<&Job> = facts
        .running
        .iter()
        .filter(|j| j.heartbeat_at.or(j.started_at).is_some_and(|at| at < cutoff))
        .collect();
    if stuck.is_empty() {
        return None;
    }
    let what = format!(
        "{} had no heartbeat for over {}",
        plural(stuck.len(), "running job has", "running jobs have"),
        format_duration(doctor.stale_after)
    );
    let them = if stuck.len() == 1 { "it" } else { "them" };
    let (message, advice) = if facts.workers.is_empty() {
        (
            format!("{what} and no worker is alive to rescue {them}"),
            "start a worker (jobq worker): its rescue sweep puts such jobs back on their queues".to_string(),
        )
    } else {
        (
            format!(
                "{what}, and the {} alive {} not rescued {them}",
                plural(facts.workers.len(), "worker", "workers"),
                if facts.workers.len() == 1 { "has" } else { "have" }
            ),
            "look in the workers' logs for \"the rescue sweep failed\", and check that their stale_after is \
             the same as this config's"
                .to_string(),
        )
    };
    Some(
        Finding::new("stuck-running", Severity::Error, message, advice)
            .count(stuck.len() as u64)
            .ids(sample(&stuck, doctor.thresholds.sample)),
    )
}

/// Waiting jobs past their type's `wait_timeout` by more than a sweep, per queue: no worker serving
/// the queue gives them up.
fn overdue_waiting(facts: &Facts, doctor: &Doctor) -> Vec<Finding> {
    let grace = rescue_interval(doctor.stale_after);
    let mut by_queue: BTreeMap<&str, Vec<&Job>> = BTreeMap::new();
    for job in &facts.waiting {
        let (Some(limit), Some(parked)) = (doctor.wait_timeout(&job.job_type), job.finished_at) else {
            continue;
        };
        if facts.now.since(parked) > limit + grace {
            by_queue.entry(&job.queue).or_default().push(job);
        }
    }
    by_queue
        .into_iter()
        .map(|(queue, jobs)| {
            let served = serves(facts, queue);
            let advice = if served {
                "look in the logs of the workers serving it for the wait time-out sweep's errors, or resolve them: \
                 jobq resolve ID --retry (or --fail)"
                    .to_string()
            } else {
                format!(
                    "start a worker for it (jobq worker --queue {queue}), which gives them up, or resolve them: \
                     jobq resolve ID --retry (or --fail)"
                )
            };
            Finding::new(
                "waiting-overdue",
                Severity::Warning,
                format!(
                    "{} in queue {queue} waited longer than their type's wait_timeout{}",
                    plural(jobs.len(), "job", "jobs"),
                    if served { "" } else { ", and no worker serves the queue" }
                ),
                advice,
            )
            .queue(queue)
            .count(jobs.len() as u64)
            .ids(sample(&jobs, doctor.thresholds.sample))
        })
        .collect()
}

/// Whether a live worker serves `queue`.
fn serves(facts: &Facts, queue: &str) -> bool {
    facts.workers.iter().any(|w| w.queues.iter().any(|q| q == queue))
}

/// Queues whose oldest ready job is older than `ready_late` while none of their jobs runs: no live
/// worker serves the queue, or those that do start nothing. A paused queue is left to its pause's
/// finding.
fn late_ready(facts: &Facts, doctor: &Doctor) -> Vec<Finding> {
    let paused: BTreeSet<&str> = facts
        .pauses
        .iter()
        .filter(|p| p.job_type.is_none())
        .map(|p| p.queue.as_str())
        .collect();
    let cutoff = facts.now.minus(doctor.thresholds.ready_late);
    facts
        .queues
        .iter()
        .filter(|q| q.ready > 0 && q.running == 0 && !paused.contains(q.queue.as_str()))
        .filter(|q| q.oldest_ready_at.is_some_and(|at| at < cutoff))
        .map(|q| {
            let age = format_duration(facts.now.since(q.oldest_ready_at.unwrap_or(facts.now)));
            let waiting = format!(
                "queue {} has {} ready, the oldest for {age}",
                q.queue,
                plural(q.ready as usize, "job", "jobs")
            );
            let (severity, message, advice) = if serves(facts, &q.queue) {
                (
                    Severity::Warning,
                    format!("{waiting}, while the workers serving it run none of them"),
                    format!(
                        "see what holds them back with jobq queues (a paused type, a limit, a block from \
                         upstream) and the workers' logs; jobq list --queue {} --status pending shows them",
                        q.queue
                    ),
                )
            } else {
                (
                    Severity::Error,
                    format!("{waiting}, and no worker serves it"),
                    format!("start a worker for it: jobq worker --queue {}", q.queue),
                )
            };
            Finding::new("ready-late", severity, message, advice)
                .queue(q.queue.clone())
                .count(q.ready)
        })
        .collect()
}

/// Jobs rescued more than `rescues` times: something about them kills or hangs their workers.
fn often_rescued(facts: &Facts, doctor: &Doctor) -> Option<Finding> {
    let jobs: Vec<&Job> = facts
        .often_rescued
        .iter()
        .filter(|j| rescues(j) > doctor.thresholds.rescues as usize)
        .collect();
    if jobs.is_empty() {
        return None;
    }
    let most = jobs.iter().map(|j| rescues(j)).max().unwrap_or_default();
    Some(
        Finding::new(
            "often-rescued",
            Severity::Warning,
            format!(
                "{} lost {} worker more than {} times (up to {most}): the job may crash or hang whatever runs it",
                plural(jobs.len(), "job", "jobs"),
                if jobs.len() == 1 { "its" } else { "their" },
                doctor.thresholds.rescues
            ),
            "look at its errors and times with jobq show ID; fix the handler (memory, a crash, a hang), or \
             cancel the job (jobq cancel ID)"
                .into(),
        )
        .count(jobs.len() as u64)
        .ids(sample(&jobs, doctor.thresholds.sample)),
    )
}

/// Blocked jobs that wait for no job which has not ended: every store releases a dependent in the
/// same write as its last dependency's end, so each is a bug to report, and the job is stuck until an
/// operator moves it.
fn stranded(facts: &Facts, doctor: &Doctor) -> Option<Finding> {
    if facts.stranded.is_empty() {
        return None;
    }
    let n = facts.stranded.len();
    let mut ids: Vec<String> = facts.stranded.iter().map(|id| id.to_string()).collect();
    ids.truncate(doctor.thresholds.sample);
    Some(
        Finding::new(
            "stranded-blocked",
            Severity::Error,
            format!(
                "{} blocked although every job {} waits for has ended: {} will never run by itself",
                plural(n, "job is", "jobs are"),
                if n == 1 { "it" } else { "they" },
                if n == 1 { "it" } else { "they" },
            ),
            "look at what it waits for with jobq show ID, and report it as a bug in jobq unless an import \
             or copy stopped before it wrote the jobs' dependencies (importing the file again, or copying \
             with --resume, writes them); cancel it (jobq cancel ID), then run it again if it should \
             (jobq retry ID)"
                .into(),
        )
        .count(n as u64)
        .ids(ids),
    )
}

/// Pauses older than `paused_for`.
fn long_pauses(facts: &Facts, doctor: &Doctor) -> Vec<Finding> {
    let cutoff = facts.now.minus(doctor.thresholds.paused_for);
    facts
        .pauses
        .iter()
        .filter(|p| p.since < cutoff)
        .map(|p| {
            let how_long = format_duration(round_to_minutes(facts.now.since(p.since)));
            let (what, resume) = match &p.job_type {
                Some(t) => (
                    format!("type {t} in queue {}", p.queue),
                    format!("jobq resume {} --type {t}", p.queue),
                ),
                None => (format!("queue {}", p.queue), format!("jobq resume {}", p.queue)),
            };
            Finding::new(
                "paused-long",
                Severity::Warning,
                format!("{what} has been paused for {how_long} (since {})", p.since),
                format!("if the reason for the pause is gone, resume it: {resume}"),
            )
            .queue(p.queue.clone())
        })
        .collect()
}

/// Queues with at least `dead_letters` dead jobs.
fn dead_letters(facts: &Facts, doctor: &Doctor) -> Vec<Finding> {
    let threshold = doctor.thresholds.dead_letters;
    facts
        .queues
        .iter()
        .filter(|q| q.dead > 0 && q.dead >= threshold)
        .map(|q| {
            Finding::new(
                "dead-letters",
                Severity::Warning,
                format!(
                    "queue {} holds {} (the threshold is {threshold})",
                    q.queue,
                    plural(q.dead as usize, "dead job", "dead jobs")
                ),
                format!(
                    "see why they died (jobq list --queue {q} --status dead), replay what can run now \
                     (jobq replay-dead --queue {q}) and clean up the rest (jobq cleanup --queue {q} --status dead \
                     --older-than 7d)",
                    q = q.queue
                ),
            )
            .queue(q.queue.clone())
            .count(q.dead)
        })
        .collect()
}

/// Whole minutes, for how long something has lasted (seconds are noise there).
fn round_to_minutes(d: Duration) -> Duration {
    Duration::from_secs(d.as_secs() / 60 * 60)
}

#[cfg(test)]
mod tests;
