//! `jobq migrate`: applies the schema; `--print` shows its SQL.

use super::Sandbox;

#[test]
fn migrate_creates_the_schema_and_is_idempotent() {
    let env = Sandbox::new();
    snap!("first", env.run(["migrate"]));
    assert!(env.path().join("jobs.db").is_file());
    snap!("again", env.run(["migrate"]));
    snap!("quiet", env.run(["migrate", "-q"]));
}

#[test]
fn migrate_print_shows_the_sql_without_touching_the_store() {
    let env = Sandbox::verbatim();
    snap!(env.run(["migrate", "--print"]));
    assert!(!env.path().join("jobs.db").exists());
}
