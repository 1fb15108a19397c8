"""Runs release the GIL: other Python threads go on while the simulator works."""

import threading
import time

import swapsim
from conftest import ROOT


def test_a_sweep_leaves_other_threads_running():
    scenario = swapsim.load(ROOT / "scenarios" / "zipf-memcg.toml")
    worker = threading.Thread(
        target=swapsim.sweep, args=(scenario,), kwargs={"vary": {"swap.page_cluster": [0, 1, 2, 3]}, "jobs": 1}
    )
    started = time.monotonic()
    worker.start()
    longest_gap = 0.0
    last = time.monotonic()
    while worker.is_alive():
        time.sleep(0.001)
        now = time.monotonic()
        longest_gap = max(longest_gap, now - last)
        last = now
    worker.join()
    elapsed = time.monotonic() - started
    # Holding the GIL, the sweep would stop this loop for its whole length.
    assert longest_gap < elapsed / 2, (longest_gap, elapsed)
