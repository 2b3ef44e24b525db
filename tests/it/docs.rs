//! The docs hold together: every relative link in the README, ARCHITECTURE, BENCHMARKS, the guide
//! (`docs/src/`) and the examples' READMEs names a file that exists, and every `#anchor` a heading of
//! its target (GitHub's and mdBook's ids, which agree); the guide's `SUMMARY.md` lists every page;
//! and the README and ARCHITECTURE stay maps, short enough to read through, with the reference in the
//! guide. `mdbook build docs` (in `.ci/run`) checks that the guide builds.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Markdown files whose links are checked.
fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut files: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md"]
        .iter()
        .map(|f| root.join(f))
        .collect();
    files.extend(markdown_in(&root.join("docs/src")));
    for folder in [
        "examples",
        "examples/handlers",
        "examples/deploy",
        "examples/demo",
        "benches",
    ] {
        let readme = root.join(folder).join("README.md");
        if readme.exists() {
            files.push(readme);
        }
    }
    files
}

fn markdown_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("a folder entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files
}

/// The lines of a Markdown text outside fenced code blocks, inline code spans blanked out.
fn prose(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut kept = String::new();
        for (i, part) in line.split('`').enumerate() {
            kept.push_str(if i % 2 == 0 { part } else { "" });
        }
        lines.push(kept);
    }
    lines
}

/// A heading's id, as GitHub and mdBook make it: lower case, letters, digits, `-` and `_` kept,
/// whitespace turned into `-`, the rest dropped. (A heading's inline code counts, so it is read from
/// the raw line.)
fn slug(heading: &str) -> String {
    heading
        .trim_start_matches('#')
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            c if c.is_whitespace() => Some('-'),
            _ => None,
        })
        .collect()
}

/// The ids of a Markdown file's headings.
fn anchors(file: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
    let mut fenced = false;
    let mut ids = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            ids.insert(slug(line));
        }
    }
    ids
}

/// Every `[label](target)` of a text's prose, with its line number.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in prose(text).iter().enumerate() {
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            found.push((n + 1, after[..end].to_string()));
            rest = &after[end..];
        }
    }
    found
}

#[test]
fn every_relative_link_names_a_file_and_a_heading_that_exist() {
    let mut broken = Vec::new();
    for document in documents() {
        let text = std::fs::read_to_string(&document).unwrap();
        let folder = document.parent().unwrap();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                document.clone()
            } else {
                folder.join(path)
            };
            let shown = format!("{}:{line}: {target}", document.strip_prefix(root()).unwrap().display());
            if !file.exists() {
                broken.push(format!("{shown} (no such file)"));
            } else if let Some(anchor) = anchor
                && file.extension().is_some_and(|e| e == "md")
                && !anchors(&file).contains(anchor)
            {
                broken.push(format!("{shown} (no such heading)"));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_guide_lists_every_page() {
    let src = root().join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).expect("docs/src/SUMMARY.md");
    let listed: BTreeSet<String> = links(&summary).into_iter().map(|(_, target)| target).collect();
    let missing: Vec<String> = markdown_in(&src)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|name| name != "SUMMARY.md" && !listed.contains(name))
        .collect();
    assert!(missing.is_empty(), "pages SUMMARY.md does not list: {missing:?}");
}

#[test]
fn the_readme_and_architecture_stay_maps() {
    for (file, most) in [("README.md", 350), ("ARCHITECTURE.md", 150)] {
        let lines = std::fs::read_to_string(root().join(file)).unwrap().lines().count();
        assert!(
            lines <= most,
            "{file} has {lines} lines (at most {most}): it is a map; the reference goes into the guide under docs/src/"
        );
    }
}
