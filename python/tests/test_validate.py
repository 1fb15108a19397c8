"""Validation against the repository's real-kernel cases, on a subset to stay quick."""

import pytest

import swapsim

CASES = ["A-seq-pc0-vma", "B-swapoff-pc1-vma"]


def test_validate_replays_the_cases_asked_for(root):
    v = swapsim.validate(root / "validation" / "linux-6.18", cases=CASES, seeds=2)
    assert v["lru"] == "classic"
    assert v["seeds"] == 2
    assert sorted(case["id"] for case in v["cases"]) == sorted(CASES)
    case = v["cases"][0]
    assert case["seeds"]["runs"] == 2
    assert case["sim"]["vmstat"]["pswpout"] > 0
    assert v["summary"], "figures compared over the cases"


def test_validate_errors(root, tmp_path):
    with pytest.raises(swapsim.SwapsimError, match="no-such-case"):
        swapsim.validate(root / "validation" / "linux-6.18", cases=["no-such-case"], seeds=1)
    with pytest.raises(swapsim.SwapsimError, match="lru"):
        swapsim.validate(root / "validation" / "linux-6.18", lru="lfu")
    with pytest.raises(swapsim.SwapsimError):
        swapsim.validate(tmp_path / "empty")


def test_a_case_scenario_runs_as_validate_replays_it(root):
    cases = root / "validation" / "linux-6.18"
    scenario = swapsim.case_scenario(cases, "A-seq-pc0-vma")
    report = scenario.run()
    replayed = swapsim.validate(cases, cases=["A-seq-pc0-vma"], seeds=1)["cases"][0]["sim"]
    for counter in ("pswpin", "pswpout", "pgmajfault"):
        assert report["vmstat"][counter] == replayed["vmstat"][counter], counter
    assert report["vmstat"]["pswpout"] > 0
    sampled = scenario.set("report.sample_every", "100ms").run()
    assert sampled["vmstat"] == report["vmstat"] and sampled["series"]["samples"]
    with pytest.raises(swapsim.SwapsimError, match="no-such-case"):
        swapsim.case_scenario(cases, "no-such-case")
    with pytest.raises(swapsim.SwapsimError, match="seeds start at 1"):
        swapsim.case_scenario(cases, "A-seq-pc0-vma", seed=0)
