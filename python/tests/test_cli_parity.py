"""The dicts are the command's JSON documents: compared with the `swapsim` binary's output.

Needs the binary: SWAPSIM_BIN, or the debug build `cargo test --workspace` leaves in the
target folder (CARGO_TARGET_DIR, else the repository's target/); skipped without one.
"""

import json
import os
import pathlib
import subprocess

import pytest

import swapsim
from conftest import ROOT


def binary():
    if os.environ.get("SWAPSIM_BIN"):
        return pathlib.Path(os.environ["SWAPSIM_BIN"])
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    return target / "debug" / "swapsim"


pytestmark = pytest.mark.skipif(not binary().is_file(), reason="no swapsim binary built (SWAPSIM_BIN)")


def command(*args):
    done = subprocess.run([str(binary()), *args], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_a_run_document_is_the_commands():
    cli = command("run", "scenarios/zipf-memcg.toml", "--format", "json", "--set", "swap.page_cluster=0")
    ours = swapsim.load(ROOT / "scenarios" / "zipf-memcg.toml").set("swap.page_cluster", 0).run()
    cli.pop("host")
    ours.pop("host")
    assert ours == cli


def test_sweep_rows_are_the_commands_variants_and_summary():
    cli = command(
        "sweep", "scenarios/zipf-memcg.toml", "--format", "json", "--vary", "swap.page_cluster=0,3",
        "--seeds", "2", "--baseline", "swap.page_cluster=0", "--set", "memcg.limit=96MiB",
    )
    scenario = swapsim.load(ROOT / "scenarios" / "zipf-memcg.toml")
    rows = swapsim.sweep(
        scenario, vary={"swap.page_cluster": [0, 3]}, seeds=2, baseline={"swap.page_cluster": 0},
        set={"memcg.limit": "96MiB"},
    )
    assert len(rows) == len(cli["variants"]) == 2
    for row, variant, summary in zip(rows, cli["variants"], cli["summary"]["rows"]):
        assert row["index"] == variant["index"] == summary["index"]
        assert row["settings"] == variant["settings"]
        assert row["status"] == variant["status"]
        assert [{"status": run["status"], "report": run["report"]} for run in row["runs"]] == variant["runs"]
        assert row["summary"] == {name: cell for name, cell in summary.items() if name not in ("index", "status")}
