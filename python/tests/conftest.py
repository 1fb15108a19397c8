"""Shared fixtures: a small scenario as TOML text, and the repository's folders."""

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# A 16 MiB zipf workload under a 4 MiB memory cgroup: it swaps, and runs in well under a
# second.
SMALL = """
seed = 3
[memcg]
limit = "4MiB"
[[swap.devices]]
name = "vda"
size = "64MiB"
[workload.generator]
pattern = "zipf"
region = "16MiB"
passes = 2
"""


@pytest.fixture
def small():
    import swapsim

    return swapsim.from_toml(SMALL)


@pytest.fixture
def root():
    return ROOT
