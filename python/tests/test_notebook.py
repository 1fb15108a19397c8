"""The example notebook's code runs (its plots only where matplotlib is installed)."""

import importlib.util
import json
import pathlib

import pytest

NOTEBOOK = pathlib.Path(__file__).resolve().parents[1] / "examples" / "notebook.ipynb"


@pytest.mark.skipif(importlib.util.find_spec("pandas") is None, reason="pandas is not installed")
def test_the_example_notebook_runs(root, monkeypatch):
    notebook = json.loads(NOTEBOOK.read_text())
    assert notebook["nbformat"] == 4
    has_matplotlib = importlib.util.find_spec("matplotlib") is not None
    if has_matplotlib:
        monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.chdir(root)
    namespace = {}
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        assert cell["outputs"] == [], "the notebook is kept without outputs"
        source = "".join(cell["source"])
        if ".plot(" in source and not has_matplotlib:
            continue
        exec(compile(source, f"{NOTEBOOK.name}", "exec"), namespace)
    assert namespace["case"]["id"] == "A-seq-pc0-vma"
    assert list(namespace["summary"]["swap.page_cluster"]) == [0, 1, 3]
