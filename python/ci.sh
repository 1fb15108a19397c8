#!/usr/bin/env bash
# The Python package's check, as a user installs it: a fresh virtual environment,
# `pip install ./python` (maturin builds the extension in release from crates.io and PyPI),
# then its tests. Also holds the binding's Rust to the workspace's formatting and lints,
# which `cargo fmt --all` and `cargo clippy --workspace` do not reach (it is outside the
# workspace). Run from anywhere; .ci/run calls it after the workspace's checks.
#
# CARGO_TARGET_DIR defaults to the workspace's target/, so that a machine that already
# built the workspace (the lint pass, `cargo build --release`) reuses whatever compiled
# dependencies match. SWAPSIM_PY_VENV names the environment to create (default: a fresh
# temporary folder, removed at the end).
#
# Measured on 2 shared cores: from an empty target folder 9 min 23 s (3 min 49 s of CPU,
# nearly all the release build of the extension and its dependencies; the tests take
# 6 s); with the folder warm, 33 s. A release build cannot reuse the test command's
# artefacts (another profile); building the extension under the test profile instead
# was tried and saved little (serde, syn and every swapsim crate rebuilt for their
# features and opt-level), for a slower module.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/../target}"
if [[ -n "${SWAPSIM_PY_VENV:-}" ]]; then
    venv="$SWAPSIM_PY_VENV"
else
    scratch="$(mktemp -d)"
    trap 'rm -rf "$scratch"' EXIT
    venv="$scratch/venv"
fi

cd "$here"
cargo fmt --manifest-path Cargo.toml -- --check
cargo clippy --manifest-path Cargo.toml --all-targets --quiet -- -D warnings

python3 -m venv "$venv"
"$venv/bin/pip" install --quiet . pytest pandas
# pytest from the package folder: the tests import the installed package (tests/ has no
# __init__.py, so python/ itself never lands on the import path).
"$venv/bin/pytest" -q -p no:cacheprovider tests
