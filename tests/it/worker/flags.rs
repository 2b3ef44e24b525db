//! `jobq worker --handler TYPE=TARGET`: a worker started with no config file at all, flags that
//! override a file's handlers, and flags of a bad form refused before anything runs.

use super::*;

impl World {
    /// `jobq --url URL ARGS…` in this world's folder, without its config file.
    fn jobq_without_config(&self, args: &[&str]) -> Command {
        let mut cmd = process::jobq();
        cmd.arg("--url")
            .arg(self.store.url())
            .args(args)
            .current_dir(self.dir.path())
            .stdout(Stdio::piped());
        cmd
    }
}

/// Every kind of target a flag names runs its jobs, with no config file anywhere.
async fn handler_flags_start_a_worker_without_a_config_file(store: TestStore) {
    let world = World::new(store, "").await;
    std::fs::remove_file(&world.config).unwrap();
    world.script("send-mail", "echo '::result {\"sent\":true}'");
    let kit = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/handlers/python/example.py");
    let mail = world.enqueue(JobSpec::new("mail.send", json!({}))).await;
    let noop = world.enqueue(JobSpec::new("noop", json!({}))).await;
    let other = world.enqueue(JobSpec::new("greet", json!({"name": "Ada"}))).await;
    let everything_else = format!("*=persistent:python3 {kit}");
    let worker = Process::spawn(
        world.jobq_without_config(&[
            "worker",
            "--burst",
            "--handler",
            "mail.send=./send-mail",
            "--handler",
            "noop=builtin:noop",
            "--handler",
            &everything_else,
        ]),
        &world.path("w.log"),
    );
    let status = worker.exit(secs(30)).await;
    assert!(status.success(), "{status:?}\n{}", worker.log());
    let job = world.job(&mail).await;
    assert_eq!(
        job.result.as_ref().map(|r| r.get()),
        Some(r#"{"sent":true}"#),
        "{}",
        json!(job)
    );
    assert_eq!(world.job(&noop).await.status, JobStatus::Succeeded);
    let job = world.job(&other).await;
    assert_eq!(
        job.result.as_ref().map(|r| r.get()),
        Some(r#"{"greeting":"hello Ada"}"#),
        "{}",
        json!(job)
    );
}

/// A flag replaces the config file's handler for its type and leaves the others.
async fn a_handler_flag_overrides_the_files_handler_for_its_type(store: TestStore) {
    let world = World::new(
        store,
        &format!("{FAST}\n[handlers.a]\nbuiltin = \"fail\"\n[handlers.b]\nbuiltin = \"echo\"\n"),
    )
    .await;
    let a = world.enqueue(JobSpec::new("a", json!({})).max_attempts(1)).await;
    let b = world.enqueue(JobSpec::new("b", json!({"n": 1}))).await;
    let worker = world.worker("w", &["--burst", "--handler", "a=builtin:noop"]);
    assert!(worker.exit(secs(30)).await.success(), "{}", worker.log());
    assert_eq!(world.job(&a).await.status, JobStatus::Succeeded, "the flag won");
    let job = world.job(&b).await;
    assert_eq!(
        job.result.as_ref().map(|r| r.get()),
        Some(r#"{"n":1}"#),
        "the file's b stays"
    );
}

/// A flag of a bad form, or one naming a handler that cannot be made: exit 2, one line naming the
/// flag, and no job touched.
async fn bad_handler_flags_exit_2_naming_the_flag(store: TestStore) {
    let world = World::new(store, "").await;
    std::fs::remove_file(&world.config).unwrap();
    let id = world.enqueue(JobSpec::new("x", json!({}))).await;
    for (flag, says) in [
        ("mail.send", "expected TYPE=TARGET"),
        ("x=ftp://files.example/run", "unknown scheme \"ftp\""),
        ("x=builtin:nope", "unknown builtin"),
        ("x=./no-such-program", "does not exist"),
    ] {
        let out = world
            .jobq_without_config(&["worker", "--burst", "--handler", flag])
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {err}");
        assert!(err.contains("--handler") && err.contains(says), "{flag}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{flag}: {err}");
    }
    let job = world.job(&id).await;
    assert_eq!((job.status, job.attempt), (JobStatus::Pending, 0));
}

crate::support::store_tests! {
    run |case, fixture| case(fixture().await).await;
    stores {
        sqlite => support::sqlite_store,
        postgres => support::postgres_store,
    }
    cases {
        handler_flags_start_a_worker_without_a_config_file,
        a_handler_flag_overrides_the_files_handler_for_its_type,
        bad_handler_flags_exit_2_naming_the_flag,
    }
}
