//! The two crates keep their shape: the library (`crates/jobq`) builds for an embedder with one store
//! and none of the application's dependencies, and in either crate no top-level module imports one on
//! a floor above its own (so no two import each other).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// What a Rust service that embeds jobq with one store must not compile: the application's
/// command line, server, bridges and terminal output.
const APPLICATION_ONLY: [&str; 11] = [
    "rdkafka",
    "rdkafka-sys",
    "lapin",
    "axum",
    "axum-server",
    "clap",
    "indicatif",
    "comfy-table",
    "dialoguer",
    "tracing-subscriber",
    "toml",
];

/// `cargo tree` of the library alone with `args`, one line per crate (or per feature with `-e
/// features`), run offline on the lock file; empty when `-i` names a crate the tree does not hold.
fn cargo_tree(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO"))
        .current_dir(root())
        .args(["tree", "--offline", "-p", "jobq", "--prefix", "none"])
        .args(args)
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if args.contains(&"-i") && stderr.contains("did not match any packages") {
        return String::new();
    }
    assert!(
        out.status.success(),
        "cargo tree {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("cargo tree prints UTF-8")
}

#[test]
fn an_embedder_with_one_store_builds_none_of_the_application() {
    for store in ["sqlite", "postgres", "mysql", "redis"] {
        let tree = cargo_tree(&["-e", "normal", "--no-default-features", "--features", store]);
        let crates: BTreeSet<&str> = tree.lines().filter_map(|l| l.split_whitespace().next()).collect();
        let found: Vec<&str> = APPLICATION_ONLY.into_iter().filter(|c| crates.contains(c)).collect();
        assert!(
            found.is_empty(),
            "the library with only {store} depends on {found:?}: move what needs them to the application crate"
        );
        // reqwest's HTTP client (the http handler) brings hyper; its server side must not come.
        let hyper = cargo_tree(&[
            "-e",
            "features,normal",
            "--no-default-features",
            "--features",
            store,
            "-i",
            "hyper",
        ]);
        assert!(
            !hyper.contains("hyper feature \"server\""),
            "the library with only {store} builds hyper's server:\n{hyper}"
        );
    }
}

/// Top-level modules by floor, lowest first: a module may import only from floors below its own.
const LIBRARY_FLOORS: &[&[&str]] = &[
    &["time", "memory", "input"],
    &["job"],
    &["retry", "store"],
    &["error"],
    &["events", "schedule", "handler"],
    &["worker"],
    &["doctor", "autoscale"],
    &["client"],
];

const APPLICATION_FLOORS: &[&[&str]] = &[&["report", "bridge", "bench"], &["config"], &["serve"], &["cli"]];

#[test]
fn no_module_imports_one_on_a_floor_above_its_own() {
    for (src, floors) in [
        (root().join("crates/jobq/src"), LIBRARY_FLOORS),
        (root().join("src"), APPLICATION_FLOORS),
    ] {
        let floor_of: BTreeMap<&str, usize> = floors
            .iter()
            .enumerate()
            .flat_map(|(n, mods)| mods.iter().map(move |m| (*m, n)))
            .collect();
        let imports = imports_between_modules(&src);
        let unplaced: Vec<&String> = imports.keys().filter(|m| !floor_of.contains_key(m.as_str())).collect();
        assert!(
            unplaced.is_empty(),
            "{}: put {unplaced:?} on a floor in tests/it/crates.rs",
            src.display()
        );
        let mut upward = Vec::new();
        for (module, uses) in &imports {
            for used in uses {
                if let Some(&their_floor) = floor_of.get(used.as_str())
                    && their_floor >= floor_of[module.as_str()]
                {
                    upward.push(format!("{module} -> {used}"));
                }
            }
        }
        assert!(
            upward.is_empty(),
            "{}: imports that run up or across a floor: {upward:?}",
            src.display()
        );
    }
}

/// For each top-level module of the crate whose sources are in `src`, the other top-level modules its
/// code names as `crate::NAME` (comments aside).
fn imports_between_modules(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut modules = BTreeMap::new();
    for entry in std::fs::read_dir(src).expect("the crate's src/ reads") {
        let path = entry.expect("a directory entry").path();
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("UTF-8 names")
            .to_string();
        if name == "lib" || name == "main" {
            continue;
        }
        let mut files = Vec::new();
        collect_rust_files(&path, &mut files);
        let uses: &mut BTreeSet<String> = modules.entry(name.clone()).or_default();
        for file in files {
            let text = std::fs::read_to_string(&file).expect("source reads");
            for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
                uses.extend(named_modules(line).into_iter().filter(|m| *m != name));
            }
        }
    }
    modules
}

fn collect_rust_files(path: &Path, files: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).expect("a module folder reads") {
            collect_rust_files(&entry.expect("a directory entry").path(), files);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        files.push(path.to_path_buf());
    }
}

/// The top-level modules a line names: `crate::store::X` and each item of `crate::{store, job::Y}`.
fn named_modules(line: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = group.split('}').next().unwrap_or("");
            names.extend(inner.split(',').map(|item| leading_name(item.trim())));
        } else {
            names.push(leading_name(rest));
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

fn leading_name(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
        .collect()
}
