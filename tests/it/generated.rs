//! The generated completions/ and man/ folders, and the guide's command-line reference
//! (docs/src/cli.md), must match what the clap definition renders now.
//! `JOBQ_BLESS=1 cargo test generated` rewrites them.

use std::path::{Path, PathBuf};

use jobq_cli::cli::generate::{SHELLS, completion, man_pages, markdown_reference};

fn check(dir: &Path, files: Vec<(String, Vec<u8>)>) {
    let bless = std::env::var_os("JOBQ_BLESS").is_some();
    if bless {
        std::fs::create_dir_all(dir).unwrap();
    }
    let mut stale = Vec::new();
    for (name, rendered) in &files {
        let path = dir.join(name);
        if bless {
            std::fs::write(&path, rendered).unwrap();
        } else if std::fs::read(&path).ok().as_deref() != Some(rendered.as_slice()) {
            stale.push(path.display().to_string());
        }
    }
    // A page or script for something that no longer exists is stale too.
    let expected: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if !expected.contains(&name.as_str()) {
            if bless {
                std::fs::remove_file(dir.join(&name)).unwrap();
            } else {
                stale.push(format!("{} (no longer generated)", dir.join(&name).display()));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "generated files are stale: {stale:?}; run `JOBQ_BLESS=1 cargo test generated` and commit"
    );
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn completions_are_current() {
    let files = SHELLS
        .iter()
        .map(|(shell, name)| (name.to_string(), completion(*shell)))
        .collect();
    check(&root().join("completions"), files);
}

#[test]
fn man_pages_are_current() {
    check(&root().join("man"), man_pages().unwrap());
}

#[test]
fn the_guides_cli_reference_is_current() {
    // The guide's reference of every subcommand and option: generated, so it cannot contradict the
    // CLI's help.
    let path = root().join("docs/src/cli.md");
    let rendered = markdown_reference();
    if std::env::var_os("JOBQ_BLESS").is_some() {
        std::fs::write(&path, &rendered).unwrap();
    } else {
        assert!(
            std::fs::read_to_string(&path).ok().as_deref() == Some(rendered.as_str()),
            "{} is stale; run `JOBQ_BLESS=1 cargo test generated` and commit",
            path.display()
        );
    }
}

#[test]
fn the_cli_definition_is_consistent() {
    use clap::CommandFactory;
    jobq_cli::cli::Cli::command().debug_assert();
}
