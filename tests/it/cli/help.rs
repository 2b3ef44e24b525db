//! Every `--help`, snapshotted as printed, and clap's own consistency checks of the definition.

use clap::CommandFactory;
use jobq_cli::cli::Cli;

use super::Sandbox;

#[test]
fn the_command_line_definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn jobq_help() {
    let env = Sandbox::verbatim();
    snap!("help", env.run(["--help"]));
    snap!("short_help", env.run(["-h"]));
}

#[test]
fn every_subcommand_has_help() {
    let env = Sandbox::verbatim();
    for sub in Cli::command().get_subcommands() {
        let name = sub.get_name().to_string();
        snap!(
            format!("help_{}", name.replace('-', "_")),
            env.run([name.as_str(), "--help"])
        );
    }
    // The alias prints the same help as replay-dead.
    let alias = env.run(["replay", "--help"]);
    let full = env.run(["replay-dead", "--help"]);
    assert_eq!(alias.stdout, full.stdout);
}

#[test]
fn jobq_without_a_subcommand_prints_help_and_fails() {
    let env = Sandbox::verbatim();
    let run = env.run(Vec::<&str>::new());
    assert_eq!(run.code, 2);
    assert!(run.stdout.is_empty());
    assert!(run.stderr.contains("Usage: jobq [OPTIONS] <COMMAND>"), "{}", run.stderr);
}
