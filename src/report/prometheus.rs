//! The Prometheus text exposition of the stats: what `jobq stats -o prometheus` prints and the store's
//! half of `jobq serve`'s `/metrics`.

use std::fmt::Write as _;

use jobq::job::JobStatus;
use jobq::store::StatsReport;
use jobq::time::UnixMillis;

/// One gauge of jobs by queue and status, one of scheduled jobs, and the age of the oldest ready job
/// per queue.
pub fn prometheus(stats: &StatsReport, now: UnixMillis) -> String {
    let mut out = String::new();
    out.push_str("# HELP jobq_jobs Jobs by queue and status.\n# TYPE jobq_jobs gauge\n");
    for q in &stats.queues {
        for status in JobStatus::ALL {
            let _ = writeln!(
                out,
                "jobq_jobs{{queue=\"{}\",status=\"{status}\"}} {}",
                label(&q.queue),
                q.count(status)
            );
        }
    }
    out.push_str(
        "# HELP jobq_jobs_scheduled Pending jobs whose run time is still ahead.\n# TYPE jobq_jobs_scheduled gauge\n",
    );
    for q in &stats.queues {
        let _ = writeln!(
            out,
            "jobq_jobs_scheduled{{queue=\"{}\"}} {}",
            label(&q.queue),
            q.scheduled
        );
    }
    out.push_str(
        "# HELP jobq_oldest_ready_age_seconds How long the oldest ready job has been ready.\n# TYPE jobq_oldest_ready_age_seconds gauge\n",
    );
    for q in &stats.queues {
        let age = q.oldest_ready_at.map(|at| now.since(at).as_secs_f64()).unwrap_or(0.0);
        let _ = writeln!(
            out,
            "jobq_oldest_ready_age_seconds{{queue=\"{}\"}} {age:.3}",
            label(&q.queue)
        );
    }
    out
}

/// A label value escaped as the exposition format wants: backslash, double quote and line feed.
pub fn label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}
