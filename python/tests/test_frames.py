"""Flattening, and DataFrames when pandas is installed (skipped otherwise)."""

import importlib.util
import sys

import pytest

import swapsim

HAS_PANDAS = importlib.util.find_spec("pandas") is not None
needs_pandas = pytest.mark.skipif(not HAS_PANDAS, reason="pandas is not installed")

# A run document with a time series, made up: the frames must not depend on which fields
# a real run has.
SYNTHETIC = {
    "seed": 1,
    "vmstat": {"pswpin": 10, "pswpout": 20},
    "block": [{"device": "vda", "reads": {"requests": 4}}],
    "series": [
        {"t_s": 0.0, "vmstat": {"pswpin": 0}, "free": [1, 2]},
        {"t_s": 0.5, "vmstat": {"pswpin": 4}, "free": [3, 4]},
        {"t_s": 1.0, "vmstat": {"pswpin": 10}, "free": [5, 6]},
    ],
    "empty": {},
}


def test_flatten_joins_keys_with_dots_and_numbers_list_items():
    flat = swapsim.flatten(SYNTHETIC)
    assert flat["vmstat.pswpin"] == 10
    assert flat["block.0.reads.requests"] == 4
    assert flat["series.1.vmstat.pswpin"] == 4
    assert flat["series.2.free.1"] == 6
    assert not any(key.startswith("empty") for key in flat)
    assert swapsim.flatten({"a": None}) == {"a": None}


@needs_pandas
def test_series_frame_makes_one_row_per_sample():
    frame = swapsim.series_frame(SYNTHETIC)
    assert list(frame.columns) == ["t_s", "vmstat.pswpin", "free.0", "free.1"]
    assert frame["vmstat.pswpin"].tolist() == [0, 4, 10]
    blocks = swapsim.series_frame(SYNTHETIC, key="block")
    assert blocks["reads.requests"].tolist() == [4]
    with pytest.raises(KeyError, match="no field 'series'"):
        swapsim.series_frame({"vmstat": {}})
    with pytest.raises(TypeError, match="not a list of records"):
        swapsim.series_frame(SYNTHETIC, key="vmstat")


@needs_pandas
def test_a_sampled_run_gives_one_row_per_interval(small):
    doc = small.set("report.sample_every", "20ms").run()
    frame = swapsim.series_frame(doc)
    samples = doc["series"]["samples"]
    assert len(frame) == len(samples) > 1
    assert frame["vmstat.pswpin"].sum() == doc["vmstat"]["pswpin"], "intervals add up to the totals"
    assert frame["t_ns"].is_monotonic_increasing
    assert len(swapsim.series_frame(doc, key="series.samples")) == len(samples)


@needs_pandas
def test_runs_frame_flattens_run_documents(small):
    docs = [small.run(), small.set("swap.page_cluster", 0).run()]
    frame = swapsim.runs_frame(docs)
    assert len(frame) == 2
    assert frame["vmstat.pswpin"].tolist() == [doc["vmstat"]["pswpin"] for doc in docs]
    assert "block.0.reads.dispatches" in frame.columns
    assert not any(column.startswith(("scenario.", "host.")) for column in frame.columns)
    full = swapsim.runs_frame(docs, exclude=())
    assert full["scenario.swap.page_cluster"].tolist()[1] == 0


@needs_pandas
def test_sweep_and_summary_frames(small):
    rows = swapsim.sweep(small, vary={"swap.page_cluster": [0, 3]}, seeds=2, baseline={"swap.page_cluster": 0})
    frame = swapsim.sweep_frame(rows)
    assert len(frame) == 4, "one row per variant and seed"
    assert frame["swap.page_cluster"].tolist() == [0, 0, 3, 3]
    assert frame["seed"].tolist() == [3, 4, 3, 4]
    assert list(frame.columns[:4]) == ["index", "swap.page_cluster", "seed", "status"]
    summary = swapsim.summary_frame(rows)
    assert summary["swap.page_cluster"].tolist() == [0, 3]
    assert summary["pswpin_ratio"].tolist()[0] == 1.0
    means = frame.groupby("swap.page_cluster")["vmstat.pswpin"].mean().tolist()
    assert summary["pswpin"].tolist() == pytest.approx(means)
    plain = swapsim.sweep(small, vary={"swap.page_cluster": [0, 3]})
    assert len(swapsim.sweep_frame(plain)) == 2
    with pytest.raises(ValueError, match="no summary"):
        swapsim.summary_frame(plain)


def test_frames_without_pandas_raise_a_clear_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        swapsim.runs_frame([])
    with pytest.raises(ImportError, match="series_frame"):
        swapsim.series_frame(SYNTHETIC)
