//! Retention: a worker configured with `retention` (or a retention per status) deletes terminal jobs
//! (succeeded, dead, cancelled, discarded, expired) that finished longer ago than their status keeps
//! them, in the background.
//!
//! It deletes in bounded batches with pauses in between, so it never holds the store's write lock for
//! long against the workers' own writes. It never deletes a job that is not terminal, and never one
//! younger than its status's retention: the store's cleanup applies both conditions in the statement
//! itself (one cleanup per group of statuses kept alike). A job type may have a retention of its own
//! (`WorkerSettings::retention_by_type`), and retention may keep only the newest jobs of each queue
//! and status (`retention_keep_last`): see [`plan`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{Shared, WorkerSettings};
use crate::job::JobStatus;
use crate::store::{Cleanup, JobFilter};
use crate::time::format_duration;

/// Jobs deleted per store call by retention.
const RETENTION_BATCH: u32 = 1000;
/// Pause between two retention batches, leaving the store to the workers' own writes.
const RETENTION_PAUSE: Duration = Duration::from_millis(50);

/// How often retention looks for jobs to delete: twice per retention period, between every second
/// and every five minutes.
pub(crate) fn retention_interval(keep: Duration) -> Duration {
    (keep / 2).clamp(Duration::from_secs(1), Duration::from_secs(300))
}

/// How often retention by count alone looks: a count has no period of its own.
const KEEP_LAST_INTERVAL: Duration = Duration::from_secs(60);

/// One rule of retention: the terminal jobs of `statuses` (of `types` only, or of every type but
/// `except`) that finished longer ago than `older_than`, or that are past the newest `keep_last` of
/// their queue and status, are deleted. Each condition deletes on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rule {
    pub statuses: Vec<JobStatus>,
    pub older_than: Option<Duration>,
    pub keep_last: Option<u32>,
    pub types: Vec<String>,
    pub except: Vec<String>,
}

/// What retention deletes, as rules that share nothing: for each terminal status, the worker's rule
/// for the types that follow it and one rule per type whose own retention differs there; statuses
/// kept alike are one rule. Empty when nothing is ever deleted.
pub(crate) fn plan(settings: &WorkerSettings) -> Vec<Rule> {
    type Key = (Option<Duration>, Option<u32>, Vec<String>, Vec<String>);
    let mut rules: BTreeMap<Key, Vec<JobStatus>> = BTreeMap::new();
    for status in JobStatus::ALL.into_iter().filter(|s| s.is_terminal()) {
        let time = settings
            .retention_by_status
            .get(&status)
            .copied()
            .or(settings.retention);
        let count = settings.retention_keep_last;
        let mut except = Vec::new();
        for (job_type, own) in &settings.retention_by_type {
            let own_rule = (own.by_status.get(&status).copied().or(time), own.keep_last.or(count));
            if own_rule != (time, count) {
                except.push(job_type.clone());
                if own_rule.0.is_some() || own_rule.1.is_some() {
                    let key = (own_rule.0, own_rule.1, vec![job_type.clone()], Vec::new());
                    rules.entry(key).or_default().push(status);
                }
            }
        }
        if time.is_some() || count.is_some() {
            rules.entry((time, count, Vec::new(), except)).or_default().push(status);
        }
    }
    let mut rules: Vec<Rule> = rules
        .into_iter()
        .map(|((older_than, keep_last, types, except), statuses)| Rule {
            statuses,
            older_than,
            keep_last,
            types,
            except,
        })
        .collect();
    // Shortest time first (the rule that sets the pace), then by what it names.
    rules.sort_by_key(|r| (r.older_than.is_none(), r.older_than));
    rules
}

/// Applies `plan`'s rules (see [`plan`]) at start and every [`retention_interval`] of the shortest
/// time (every minute for counts alone) until `stop` fires.
pub(crate) async fn run(s: Arc<Shared>, plan: Vec<Rule>, stop: CancellationToken) {
    if plan.is_empty() {
        return;
    }
    let every = plan
        .iter()
        .filter_map(|r| r.older_than)
        .min()
        .map_or(KEEP_LAST_INTERVAL, retention_interval);
    loop {
        for rule in &plan {
            let mut passes = Vec::new();
            if let Some(keep) = rule.older_than {
                passes.push((Some(s.clock.now().minus(keep)), None));
            }
            if rule.keep_last.is_some() {
                passes.push((None, rule.keep_last));
            }
            for (finished_before, keep_last) in passes {
                let Some(deleted) = delete(&s, rule, finished_before, keep_last, &stop).await else {
                    return;
                };
                if deleted > 0 {
                    tracing::info!("retention: deleted {deleted} finished jobs {}", told(rule, keep_last));
                }
            }
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
    }
}

/// How a log line names what one pass of `rule` deleted.
fn told(rule: &Rule, keep_last: Option<u32>) -> String {
    let statuses: Vec<&str> = rule.statuses.iter().map(|s| s.as_str()).collect();
    let mut text = format!("({})", statuses.join(", "));
    if !rule.types.is_empty() {
        text.push_str(&format!(" of type {}", rule.types.join(", ")));
    }
    match (keep_last, rule.older_than) {
        (Some(n), _) => text.push_str(&format!(" past the newest {n} of each queue and status")),
        (None, Some(keep)) => text.push_str(&format!(" older than {}", format_duration(keep))),
        (None, None) => {}
    }
    text
}

/// Deletes what one pass of `rule` selects (finished before `finished_before`, or past the newest
/// `keep_last`), a batch at a time; returns how many, or `None` when `stop` fired.
async fn delete(
    s: &Shared,
    rule: &Rule,
    finished_before: Option<crate::time::UnixMillis>,
    keep_last: Option<u32>,
    stop: &CancellationToken,
) -> Option<u64> {
    let mut deleted = 0u64;
    loop {
        let cleanup = Cleanup {
            filter: JobFilter {
                statuses: rule.statuses.clone(),
                job_types: rule.types.clone(),
                ..Default::default()
            },
            exclude_types: rule.except.clone(),
            finished_before,
            keep_last,
            limit: RETENTION_BATCH,
            ..Default::default()
        };
        match s.store.cleanup(&cleanup).await {
            Ok(n) => {
                deleted += n;
                if n < u64::from(RETENTION_BATCH) {
                    return Some(deleted);
                }
            }
            Err(e) => {
                s.outage
                    .failed("retention cleanup", &e, "cleaning up again at the next round");
                return Some(deleted);
            }
        }
        tokio::select! {
            _ = stop.cancelled() => return None,
            _ = tokio::time::sleep(RETENTION_PAUSE) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::Retention;

    #[test]
    fn retention_runs_twice_per_period_within_bounds() {
        assert_eq!(
            retention_interval(Duration::from_secs(7 * 86_400)),
            Duration::from_secs(300)
        );
        assert_eq!(retention_interval(Duration::from_secs(240)), Duration::from_secs(120));
        assert_eq!(retention_interval(Duration::from_millis(100)), Duration::from_secs(1));
    }

    /// A rule of `statuses` kept for `time`, of every type but `except`.
    fn every(time: Option<Duration>, keep_last: Option<u32>, statuses: &[JobStatus], except: &[&str]) -> Rule {
        Rule {
            statuses: statuses.to_vec(),
            older_than: time,
            keep_last,
            types: Vec::new(),
            except: except.iter().map(|t| t.to_string()).collect(),
        }
    }

    #[test]
    fn each_terminal_status_is_kept_for_its_own_time_or_the_default() {
        use JobStatus::*;
        let (hour, day) = (Duration::from_secs(3600), Duration::from_secs(86_400));
        let mut settings = WorkerSettings::default();
        assert!(plan(&settings).is_empty(), "no retention: nothing is ever deleted");
        settings.retention_by_status.insert(Succeeded, hour);
        assert_eq!(plan(&settings), [every(Some(hour), None, &[Succeeded], &[])]);
        settings.retention = Some(day);
        settings.retention_by_status.insert(Dead, 30 * day);
        assert_eq!(
            plan(&settings),
            [
                every(Some(hour), None, &[Succeeded], &[]),
                every(Some(day), None, &[Cancelled, Discarded, Expired], &[]),
                every(Some(30 * day), None, &[Dead], &[]),
            ]
        );
    }

    #[test]
    fn a_type_with_its_own_retention_leaves_the_workers_rule_where_it_differs() {
        use JobStatus::*;
        let day = Duration::from_secs(86_400);
        let mut settings = WorkerSettings {
            retention: Some(day),
            retention_keep_last: Some(1000),
            ..WorkerSettings::default()
        };
        let own = Retention {
            by_status: BTreeMap::from([(Dead, 90 * day)]),
            keep_last: None,
        };
        settings.retention_by_type.insert("report.build".into(), own);
        assert_eq!(
            plan(&settings),
            [
                every(Some(day), Some(1000), &[Succeeded, Cancelled, Discarded, Expired], &[]),
                every(Some(day), Some(1000), &[Dead], &["report.build"]),
                Rule {
                    statuses: vec![Dead],
                    older_than: Some(90 * day),
                    keep_last: Some(1000),
                    types: vec!["report.build".into()],
                    except: Vec::new(),
                },
            ]
        );
        // By count alone, a type that keeps more.
        let settings = WorkerSettings {
            retention_keep_last: Some(10),
            retention_by_type: BTreeMap::from([(
                "audit".to_string(),
                Retention {
                    by_status: BTreeMap::new(),
                    keep_last: Some(100),
                },
            )]),
            ..WorkerSettings::default()
        };
        let all = [Succeeded, Dead, Cancelled, Discarded, Expired];
        assert_eq!(
            plan(&settings),
            [
                every(None, Some(10), &all, &["audit"]),
                Rule {
                    statuses: all.to_vec(),
                    older_than: None,
                    keep_last: Some(100),
                    types: vec!["audit".into()],
                    except: Vec::new(),
                },
            ]
        );
    }
}
