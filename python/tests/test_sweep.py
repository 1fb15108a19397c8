"""Sweeps: rows per variant, seeds, baselines, and their errors."""

import pytest

import swapsim


def test_one_row_per_variant_in_order_first_key_slowest(small):
    rows = swapsim.sweep(small, vary={"swap.page_cluster": [0, 3], "swap.readahead": ["cluster", "none"]})
    assert [row["index"] for row in rows] == [0, 1, 2, 3]
    assert [list(row["settings"].items()) for row in rows] == [
        [("swap.page_cluster", 0), ("swap.readahead", "cluster")],
        [("swap.page_cluster", 0), ("swap.readahead", "none")],
        [("swap.page_cluster", 3), ("swap.readahead", "cluster")],
        [("swap.page_cluster", 3), ("swap.readahead", "none")],
    ]
    assert all(row["status"] == "ok" and "host" not in row["report"] for row in rows)
    assert "summary" not in rows[0]
    # Each row is what a run with the same edits reports.
    alone = small.set("swap.page_cluster", 3).set("swap.readahead", "cluster").run()
    assert rows[2]["report"]["vmstat"] == alone["vmstat"]
    assert rows[0]["report"]["vmstat"]["swap_ra"] == 0
    assert rows[2]["report"]["vmstat"]["swap_ra"] > 0


def test_ranges_text_and_fixed_edits(small):
    rows = swapsim.sweep(small, vary={"swap.page_cluster": "0..2"}, set={"memcg.limit": "8MiB"}, jobs=1)
    assert [row["settings"]["swap.page_cluster"] for row in rows] == [0, 1, 2]
    assert all(row["report"]["scenario"]["swap"]["page_cluster"] == i for i, row in enumerate(rows))
    again = swapsim.sweep(small, vary={"swap.page_cluster": range(3)}, set={"memcg.limit": "8MiB"}, jobs=2)
    assert [row["report"]["vmstat"] for row in again] == [row["report"]["vmstat"] for row in rows]


def test_seeds_and_a_baseline_give_runs_and_a_summary(small):
    rows = swapsim.sweep(
        small, vary={"swap.readahead": ["cluster", "none"]}, seeds=3, baseline={"swap.readahead": "cluster"}
    )
    assert len(rows) == 2
    for row in rows:
        assert [run["seed"] for run in row["runs"]] == [3, 4, 5]
        assert "report" not in row
        cell = row["summary"]["pswpin"]
        pswpin = [run["report"]["vmstat"]["pswpin"] for run in row["runs"]]
        assert cell["mean"] == pytest.approx(sum(pswpin) / 3)
        assert cell["ci95"] is not None and cell["ci95"] >= 0
    assert rows[0]["summary"]["pswpin"]["ratio"] == 1.0
    assert rows[1]["summary"]["pswpin"]["ratio"] == pytest.approx(
        rows[1]["summary"]["pswpin"]["mean"] / rows[0]["summary"]["pswpin"]["mean"]
    )
    assert list(rows[0]["summary"])[:3] == ["pgmajfault", "pswpin", "pswpout"]


def test_sweep_errors_name_the_setting(small):
    with pytest.raises(swapsim.SwapsimError, match="page_clustr"):
        swapsim.sweep(small, vary={"swap.page_clustr": [0, 1]})
    with pytest.raises(swapsim.SwapsimError, match="swap.page_cluster=40"):
        swapsim.sweep(small, vary={"swap.page_cluster": [0, 40]})
    with pytest.raises(swapsim.SwapsimError, match="is not a value of swap.page_cluster"):
        swapsim.sweep(small, vary={"swap.page_cluster": [0, 1]}, baseline="swap.page_cluster=2")
    with pytest.raises(swapsim.SwapsimError, match="give 1 to 1000 seeds"):
        swapsim.sweep(small, vary={"swap.page_cluster": [0]}, seeds=0)
    with pytest.raises(ValueError, match="comma"):
        swapsim.sweep(small, vary={"swap.readahead": ["a,b"]})
