//! The README's set-up commands are exactly the ones CI and these tests use.

use crate::support::{ok, repo};

/// The code blocks of the README's "Set up" section, one command each.
fn setup_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md exists");
    let section = readme.split("\n## Set up\n").nth(1).expect("a \"## Set up\" section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut commands = Vec::new();
    let mut in_block = false;
    for line in section.lines() {
        if line.starts_with("```") {
            in_block = !in_block;
        } else if in_block {
            commands.push(line.trim().to_string());
        }
    }
    commands
}

#[test]
fn readme_has_exactly_the_two_setup_commands() {
    assert_eq!(setup_commands(), ["cargo run --release -p swapsim-cli -- demo", "cargo test --workspace"]);
}

#[test]
fn ci_runs_the_readme_test_command() {
    let ci = std::fs::read_to_string(repo().join(".ci/run")).expect(".ci/run exists");
    let ci_lines: Vec<&str> = ci.lines().map(str::trim).collect();
    assert!(ci_lines.contains(&setup_commands()[1].as_str()), "{ci}");
    assert!(ci_lines.contains(&"set -euo pipefail"));
}

#[test]
fn readme_demo_command_runs() {
    let command = &setup_commands()[0];
    let args: Vec<&str> =
        command.split(" -- ").nth(1).expect("arguments after --").split_whitespace().collect();
    let text = ok(&args);
    assert!(text.contains("four swap-in readahead policies"), "{text}");
}
