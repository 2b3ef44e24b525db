//! `jobq init`: a commented `jobq.toml` in the current folder, so that a newcomer starts from a file
//! that works (a SQLite store, one handler that runs as it is) and shows every kind of handler and
//! the retry and worker defaults, then the two commands that put a job through.

use std::path::Path;

use clap::Args;

use super::exit::Exit;

/// The file `init` writes: `init.toml` beside this module, kept in step with the defaults by a test.
const TEMPLATE: &str = include_str!("init.toml");

/// Where `init` writes: the file `jobq` reads when no `--config` is given.
const FILE: &str = "jobq.toml";

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Overwrite an existing jobq.toml
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: InitArgs) -> anyhow::Result<Exit> {
    let path = Path::new(FILE);
    if path.exists() && !args.force {
        return Err(jobq::Error::config_at(
            Some(path.to_path_buf()),
            None,
            format!("{FILE} exists here already; `jobq init --force` overwrites it"),
            None,
        )
        .into());
    }
    std::fs::write(path, TEMPLATE).map_err(|e| anyhow::anyhow!("cannot write {FILE}: {e}"))?;
    println!("wrote {FILE}: jobs go to jobs.db (SQLite) here; the job type \"hello\" has a handler");
    println!("next:");
    println!("  jobq enqueue hello '{{\"name\":\"world\"}}'");
    println!("  jobq worker");
    Ok(Exit::Success)
}

#[cfg(test)]
mod tests {
    use super::TEMPLATE;
    use crate::config::{Config, Overrides};
    use jobq::retry::RetryPolicy;
    use jobq::worker::WorkerSettings;

    fn load(text: &str) -> Config {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("jobq.toml");
        std::fs::write(&path, text).unwrap();
        let overrides = Overrides {
            config: Some(path),
            ..Overrides::default()
        };
        Config::load_with(&overrides, |_| None).unwrap()
    }

    #[test]
    fn the_template_states_the_defaults() {
        let config = load(TEMPLATE);
        assert_eq!(config.retry, RetryPolicy::default());
        let defaults = WorkerSettings::default();
        let worker = &config.worker;
        assert_eq!(
            (
                &worker.queues,
                worker.concurrency,
                worker.heartbeat,
                worker.stale_after,
                worker.shutdown_timeout,
                worker.retention,
                worker.poll_interval,
                worker.schedules
            ),
            (
                &defaults.queues,
                defaults.concurrency,
                defaults.heartbeat,
                defaults.stale_after,
                defaults.shutdown_timeout,
                defaults.retention,
                defaults.poll_interval,
                defaults.schedules
            )
        );
        assert_eq!(config.handlers.keys().collect::<Vec<_>>(), ["hello"]);
    }

    #[test]
    fn every_commented_handler_is_valid_once_uncommented() {
        let uncommented: String = TEMPLATE
            .lines()
            .map(|line| match line.strip_prefix("# ") {
                // Section heads and keys; not prose, the URL examples (indented) or `retention`.
                Some(rest)
                    if rest.starts_with("[handlers.")
                        || (rest.starts_with(|c: char| c.is_ascii_lowercase())
                            && rest.contains(" = ")
                            && !rest.starts_with("retention")) =>
                {
                    rest
                }
                _ => line,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let config = load(&uncommented);
        assert_eq!(
            config.handlers.keys().collect::<Vec<_>>(),
            ["audit.record", "hello", "image.resize", "mail.send", "report.build"]
        );
    }
}
