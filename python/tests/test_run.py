"""Scenarios from TOML text and files, edits, runs and errors."""

import copy

import pytest

import swapsim
from conftest import SMALL


def without_host(doc):
    doc = copy.deepcopy(doc)
    doc.pop("host", None)
    return doc


def test_a_run_returns_the_run_document(small):
    doc = small.run()
    assert doc["seed"] == 3
    assert doc["outcome"]["kind"] == "completed"
    assert doc["vmstat"]["pswpout"] > 0
    assert doc["scenario"]["memcg"]["limit"] == "4MiB"
    assert set(doc["host"]) == {"wall_s", "accesses_per_s", "events_per_s"}
    assert doc["swapsim_version"] == swapsim.__version__


def test_the_same_scenario_and_seed_give_the_same_document(small):
    assert without_host(small.run()) == without_host(small.run())
    assert without_host(small.run(seed=9)) != without_host(small.run())
    assert small.run(seed=9)["seed"] == 9
    assert without_host(small.with_seed(9).run()) == without_host(small.run(seed=9))


def test_set_edits_change_the_results_and_leave_the_original_alone(small):
    base = small.run()
    edited = small.set("swap.page_cluster", 0)
    doc = edited.run()
    # With page-cluster 0 every swap-in reads the faulting page alone.
    assert doc["vmstat"]["swap_ra"] == 0
    assert base["vmstat"]["swap_ra"] > 0
    assert doc["scenario"]["swap"]["page_cluster"] == 0
    assert small.run()["vmstat"] == base["vmstat"], "set returns a new scenario"
    # Strings are read as --set reads them; a dict is written as an inline table.
    bigger = small.set("memcg.limit", "8MiB").run()
    assert bigger["scenario"]["memcg"]["limit"] == "8MiB"
    assert bigger["vmstat"]["pswpout"] < base["vmstat"]["pswpout"]
    nvme = small.set("swap.devices.0.model", {"preset": "nvme"}).run()
    assert nvme["vmstat"]["pswpout"] > 0
    assert nvme["block"][0] != base["block"][0]


def test_load_and_from_toml_take_edits(root, tmp_path):
    path = tmp_path / "small.toml"
    path.write_text(SMALL)
    loaded = swapsim.load(path, set={"swap.page_cluster": 0, "memcg.limit": "8MiB"})
    assert loaded.name == str(path)
    inline = swapsim.from_toml(SMALL, set={"swap.page_cluster": 0, "memcg.limit": "8MiB"})
    assert inline.name == "<inline>"
    assert without_host(loaded.run()) == without_host(inline.run())
    assert swapsim.load(root / "scenarios" / "zipf-memcg.toml").name.endswith("zipf-memcg.toml")


def test_an_unknown_key_is_an_error_naming_the_field(small):
    with pytest.raises(swapsim.SwapsimError) as caught:
        small.set("swap.page_clustr", 3)
    message = str(caught.value)
    assert "page_clustr" in message and "page_cluster" in message


def test_a_bad_value_is_an_error_naming_the_field(small):
    with pytest.raises(swapsim.SwapsimError, match=r"swap\.page_cluster: 40 is outside 0\.\.=31"):
        small.set("swap.page_cluster", 40).run()
    with pytest.raises(swapsim.SwapsimError, match="swap.page_cluster"):
        small.set("swap.page_cluster", 40).check()
    with pytest.raises(TypeError):
        small.set("swap.page_cluster", None)


def test_bad_toml_and_missing_files_name_where(tmp_path):
    with pytest.raises(swapsim.SwapsimError, match="line 3"):
        swapsim.from_toml("[memcg]\nlimit = '4MiB'\nswappiness = = 1\n")
    with pytest.raises(swapsim.SwapsimError, match="memcg.limit"):
        swapsim.from_toml('[memcg]\nlimit = "4 furlongs"\n').run()
    missing = tmp_path / "nope.toml"
    with pytest.raises(swapsim.SwapsimError, match="nope.toml"):
        swapsim.load(missing)
    assert issubclass(swapsim.SwapsimError, Exception)
