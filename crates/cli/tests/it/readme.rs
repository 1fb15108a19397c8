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

/// The shell commands of the README's "A short tour" section, in order: every line of a
/// plain code block (not `toml` or `rust`), without its trailing comment, with the
/// `cargo run` prefix replaced by the binary's name.
fn tour_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md exists");
    let section = readme.split("\n## A short tour\n").nth(1).expect("a \"## A short tour\" section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut commands = Vec::new();
    let mut in_shell_block = None;
    for line in section.lines() {
        if let Some(lang) = line.strip_prefix("```") {
            in_shell_block = match in_shell_block {
                None => Some(lang.trim().is_empty() || lang.trim() == "sh"),
                Some(_) => None,
            };
            continue;
        }
        if in_shell_block == Some(true) && !line.trim().is_empty() {
            let command = line.split("  #").next().unwrap_or(line).trim();
            let command = command.replace("cargo run --release -p swapsim-cli --", "swapsim");
            commands.push(command);
        }
    }
    commands
}

/// The tour runs as written, top to bottom, in a directory that holds the repository's
/// scenarios, traces and validation cases, with `swapsim` on the PATH and the variables a
/// Slurm array task would have.
#[test]
fn readme_tour_runs_top_to_bottom() {
    let commands = tour_commands();
    assert!(commands.len() >= 10, "the tour's commands were not found: {commands:?}");
    assert!(commands.iter().all(|c| c.starts_with("swapsim ")), "{commands:?}");
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("readme-tour");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).expect("the old tour directory can be removed");
    }
    std::fs::create_dir_all(&dir).expect("the tour directory can be created");
    for name in ["scenarios", "traces", "validation"] {
        std::os::unix::fs::symlink(repo().join(name), dir.join(name)).expect("symlink");
    }
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).expect("bin");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_swapsim"), bin.join("swapsim")).expect("symlink");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    for command in &commands {
        let out = std::process::Command::new("sh")
            .args(["-c", command])
            .current_dir(&dir)
            .env("PATH", &path)
            .env("SLURM_ARRAY_TASK_ID", "0")
            .env("SLURM_ARRAY_TASK_COUNT", "4")
            .output()
            .expect("sh runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "README tour command failed: {command}\n{stderr}");
        assert!(!stderr.contains("panicked"), "{command}: {stderr}");
    }
    // What the tour says it writes, it wrote.
    for file in ["results/sweep.json", "results/sweep.csv", "results/sweep.svg", "phases.swt", "shard-0.json"]
    {
        assert!(dir.join(file).is_file(), "{file} was not written");
    }
}
