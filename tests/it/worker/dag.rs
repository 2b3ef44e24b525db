//! Random graphs of jobs spread over two queues against a model of the rules, through a worker killed
//! with SIGKILL partway (on a Redis Cluster the two queues are two hash slots, so edges between them
//! go through an outbox): every job ends as the model says it must (run when its edges allow, by all of them or any, and
//! then succeed or die as its payload asks; cancelled when they never will), and no job started
//! before the dependencies its start relied on had ended (by the order of the handlers' own lines in
//! one file: a dependency's last line is written before its outcome, its outcome before the release,
//! the release before the dependent's first line). A second run exports the graph partway, deletes
//! it, imports it back (`Client::import`, then `Client::import_edges`) and lets the graph end there.

use std::collections::BTreeMap;

use jobq::job::Join;
use jobq::store::{ImportAnswer, ImportEdges};

use super::*;

/// Worker settings: quick heartbeats and polls, and a rescue threshold short enough for the killed
/// worker's jobs to be taken back within the test.
const QUICK: &str =
    "[worker]\nheartbeat = \"200ms\"\nstale_after = \"1s\"\npoll_interval = \"50ms\"\nshutdown_timeout = \"500ms\"\n";

/// Jobs in each graph.
const JOBS: usize = 60;

/// A small deterministic generator (xorshift64*), so that a failing graph can be made again from the
/// seed the failure prints.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

/// The queues the jobs are spread over (in different hash slots of the test cluster).
const QUEUES: [&str; 2] = ["default", "side"];

/// One job of the model: its queue, whether its handler succeeds, how its edges combine, and its
/// edges (dependency's index, rule).
struct Node {
    queue: &'static str,
    succeeds: bool,
    join: Join,
    after: Vec<(usize, DependOn)>,
}

/// A graph of [`JOBS`] jobs, each after up to three earlier ones.
fn graph(dice: &mut Dice) -> Vec<Node> {
    let rules = [DependOn::Success, DependOn::Finish, DependOn::Failure];
    (0..JOBS)
        .map(|i| {
            let mut after: Vec<(usize, DependOn)> = Vec::new();
            if i > 0 {
                for _ in 0..dice.roll(4) {
                    let dependency = dice.roll(i as u64) as usize;
                    if !after.iter().any(|(d, _)| *d == dependency) {
                        after.push((dependency, rules[dice.roll(3) as usize]));
                    }
                }
            }
            Node {
                queue: QUEUES[dice.roll(2) as usize],
                succeeds: dice.roll(4) != 0,
                join: if dice.roll(5) == 0 { Join::Any } else { Join::All },
                after,
            }
        })
        .collect()
}

/// How each job must end, in order (each job's dependencies come before it).
fn model(nodes: &[Node]) -> Vec<JobStatus> {
    let mut ends: Vec<JobStatus> = Vec::with_capacity(nodes.len());
    for node in nodes {
        let met: Vec<bool> = node.after.iter().map(|(d, on)| on.met_by(ends[*d])).collect();
        let runs = match node.join {
            _ if met.is_empty() => true,
            Join::All => met.iter().all(|m| *m),
            Join::Any => met.iter().any(|m| *m),
        };
        ends.push(match (runs, node.succeeds) {
            (false, _) => JobStatus::Cancelled,
            (true, true) => JobStatus::Succeeded,
            (true, false) => JobStatus::Dead,
        });
    }
    ends
}

pub(super) async fn random_graphs_end_as_the_model_says_through_a_kill(store: TestStore) {
    let world = World::new(store, QUICK).await;
    let (seed, nodes, expected) = enqueue_a_graph(&world).await;

    // Two workers; one is killed once a few jobs have ended, and a third takes its place.
    let first = world.worker("first", SERVE);
    let second = world.worker("second", SERVE);
    a_few_jobs_ended(&world).await;
    first.signal(libc::SIGKILL);
    first.exit(secs(5)).await;
    let third = world.worker("third", SERVE);

    let jobs = every_job_ended(&world, seed).await;
    check_against_the_model(&world, seed, &nodes, &expected, &jobs);
    for w in [&second, &third] {
        w.signal(libc::SIGTERM);
        assert!(w.exit(secs(15)).await.success(), "{}", w.log());
    }
}

pub(super) async fn random_graphs_end_as_the_model_says_across_an_export_and_import(store: TestStore) {
    let world = World::new(store, QUICK).await;
    let (seed, nodes, expected) = enqueue_a_graph(&world).await;
    let first = world.worker("first", SERVE);
    a_few_jobs_ended(&world).await;
    // Stopped, it gives its running jobs back; then the graph leaves the store, as an export
    // reads it (a job before those it waits for), and comes back.
    first.signal(libc::SIGTERM);
    assert!(first.exit(secs(15)).await.success(), "{}", first.log());
    let filter = jobq::store::JobFilter::default();
    let exported = world.client.export_page(&filter, None, JOBS as u32).await.unwrap();
    assert_eq!(exported.len(), JOBS, "seed {seed}");
    while world
        .client
        .delete_matching(filter.clone(), true)
        .await
        .unwrap()
        .deleted
        > 0
    {}
    let edges: Vec<ImportEdges> = exported.iter().filter_map(ImportEdges::of).collect();
    let report = world.client.import(exported, Default::default()).await.unwrap();
    assert_eq!(
        report.count(|a| *a == ImportAnswer::Imported),
        JOBS as u64,
        "seed {seed}"
    );
    world.client.import_edges(&edges).await.unwrap();

    let second = world.worker("second", SERVE);
    let jobs = every_job_ended(&world, seed).await;
    check_against_the_model(&world, seed, &nodes, &expected, &jobs);
    second.signal(libc::SIGTERM);
    assert!(second.exit(secs(15)).await.success(), "{}", second.log());
}

/// How the workers of the model tests serve the graph's two queues.
const SERVE: &[&str] = &["--concurrency", "4", "--queue", "default,side"];

/// Waits until a few of the graph's jobs have ended, so that a stop or a kill falls mid-run.
async fn a_few_jobs_ended(world: &World) {
    eventually("a few jobs to end", secs(60), async || {
        let stats = world.client.stats(&[]).await.unwrap();
        stats.queues.iter().map(|q| q.succeeded + q.dead).sum::<u64>() >= 10
    })
    .await;
}

/// The graph's handler (a line at its start and its end in `trace`), then a random graph enqueued
/// (the seed in every failure's message), with how each of its jobs must end.
async fn enqueue_a_graph(world: &World) -> (u64, Vec<Node>, Vec<JobStatus>) {
    // A line at its start and its end, a short nap between, then the payload's verdict: exit 1 with
    // one attempt allowed is dead.
    world.exec_handler(
        "node",
        r#"echo "start $JOBQ_JOB_ID $JOBQ_ATTEMPT" >> $D/trace
sleep 0.02
echo "end $JOBQ_JOB_ID $JOBQ_ATTEMPT" >> $D/trace
case "$(cat)" in *'"fail":true'*) exit 1 ;; esac"#,
        "",
    );
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut dice = Dice(seed);
    let nodes = graph(&mut dice);
    let expected = model(&nodes);
    let name = |i: usize| format!("n{i:02}");
    let specs: Vec<JobSpec> = nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            let spec = JobSpec::new("node", json!({ "fail": !node.succeeds }))
                .id(name(i))
                // A job meant to fail dies at its first failure; one meant to succeed survives a
                // rescue or two.
                .max_attempts(if node.succeeds { 5 } else { 1 })
                .queue(node.queue)
                .join(node.join);
            node.after.iter().fold(spec, |spec, (d, on)| {
                spec.after_on(JobId::parse(&name(*d)).unwrap(), *on)
            })
        })
        .collect();
    world.client.enqueue_many(specs).await.unwrap();
    (seed, nodes, expected)
}

/// Every job of the graph, once none is live.
async fn every_job_ended(world: &World, seed: u64) -> BTreeMap<String, Job> {
    let all = jobq::store::List {
        filter: Default::default(),
        limit: JOBS as u32,
        offset: 0,
        after: None,
    };
    eventually("every job to end", secs(120), async || {
        let jobs = world.client.list(&all).await.unwrap();
        let live: Vec<String> = jobs
            .iter()
            .filter(|j| !j.status.is_terminal())
            .map(|j| format!("{} {}", j.id, j.status))
            .collect();
        match live.is_empty() {
            true => Ok(jobs.into_iter().map(|j| (j.id.to_string(), j)).collect()),
            false => Err(lazy(move || format!("seed {seed}: still live {live:?}"))),
        }
    })
    .await
}

/// Each job ended as the model says, and none started before the dependencies its start relied on
/// had ended (by the handlers' trace).
fn check_against_the_model(
    world: &World,
    seed: u64,
    nodes: &[Node],
    expected: &[JobStatus],
    jobs: &BTreeMap<String, Job>,
) {
    let name = |i: usize| format!("n{i:02}");
    let trace = std::fs::read_to_string(world.path("trace")).unwrap_or_default();
    let mut first_start: BTreeMap<String, usize> = BTreeMap::new();
    let mut end_of: BTreeMap<(String, u32), usize> = BTreeMap::new();
    for (at, line) in trace.lines().enumerate() {
        let [kind, id, attempt] = line.split(' ').collect::<Vec<_>>()[..] else {
            panic!("seed {seed}: a trace line {line:?}");
        };
        match kind {
            "start" => first_start.entry(id.to_string()).or_insert(at),
            _ => end_of.entry((id.to_string(), attempt.parse().unwrap())).or_insert(at),
        };
    }
    for (i, node) in nodes.iter().enumerate() {
        let job = &jobs[&name(i)];
        let rules: Vec<String> = node.after.iter().map(|(d, on)| format!("{}:{on}", name(*d))).collect();
        let context = || {
            format!(
                "seed {seed}: {} ({:?}, after {rules:?}): {}",
                name(i),
                node.join,
                json!(job)
            )
        };
        assert_eq!(job.status, expected[i], "{}", context());
        let rescued = |job: &Job| job.errors.last().is_some_and(|e| e.error == "worker lost");
        let Some(&started) = first_start.get(job.id.as_str()) else {
            // Never run: cancelled before any claim, or claimed by the killed worker and taken back
            // before its program started.
            let never = job.status == JobStatus::Cancelled && job.attempt == 0;
            assert!(never || rescued(job), "{}", context());
            continue;
        };
        // The edges its start relied on (all, or for a job that waits for any, one met) had ended
        // before its first line: their last attempt's last line comes earlier. A dependency that
        // died by a rescue has no such line of its own (its program was killed with the worker), nor
        // does one that was cancelled without running.
        let ended_before = |(d, on): &(usize, DependOn)| {
            let dependency = &jobs[&name(*d)];
            let ended_at = end_of.get(&(name(*d), dependency.attempt));
            let unrun = rescued(dependency) || dependency.status == JobStatus::Cancelled;
            on.met_by(dependency.status) && (unrun || ended_at.is_some_and(|&at| at < started))
        };
        let held = match node.join {
            _ if node.after.is_empty() => true,
            Join::All => node.after.iter().all(ended_before),
            Join::Any => node.after.iter().any(ended_before),
        };
        assert!(held, "{}\n{trace}", context());
    }
}
