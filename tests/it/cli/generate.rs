//! `jobq completions SHELL` and `jobq man`. Their full text is compared with the committed copies by
//! tests/it/generated.rs; here only that the commands run, print to stdout and need no store.

use super::Sandbox;

#[test]
fn completions_print_a_script_for_every_shell() {
    let env = Sandbox::new();
    for (shell, marker) in [
        ("bash", "_jobq()"),
        ("zsh", "#compdef jobq"),
        ("fish", "complete -c jobq"),
        ("powershell", "Register-ArgumentCompleter"),
        ("elvish", "set edit:completion:arg-completer[jobq]"),
    ] {
        let run = env.run(["completions", shell]);
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        assert!(run.stderr.is_empty(), "{shell}: {}", run.stderr);
        assert!(run.stdout.contains(marker), "{shell} script lacks {marker:?}");
        assert!(
            run.stdout.contains("replay-dead"),
            "{shell} script lacks the subcommands"
        );
    }
    assert!(!env.path().join("jobs.db").exists(), "generating touches no store");
}

#[test]
fn completions_refuse_an_unknown_shell() {
    let env = Sandbox::new();
    snap!("unknown", env.run(["completions", "tcsh"]));
    snap!("missing", env.run(["completions"]));
}

#[test]
fn man_prints_jobq_1_or_writes_every_page() {
    let env = Sandbox::new();
    let run = env.run(["man"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.is_empty());
    assert!(
        run.stdout.starts_with(".ie"),
        "roff: {}",
        &run.stdout[..run.stdout.len().min(200)]
    );
    assert!(run.stdout.contains(".TH jobq 1"));

    snap!("dir", env.run(["man", "--dir", "pages"]));
    let mut pages: Vec<String> = std::fs::read_dir(env.path().join("pages"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    assert!(pages.contains(&"jobq.1".to_string()));
    assert!(pages.contains(&"jobq-enqueue.1".to_string()));
    assert!(pages.contains(&"jobq-replay-dead.1".to_string()));
    assert!(!env.path().join("jobs.db").exists(), "generating touches no store");
}
