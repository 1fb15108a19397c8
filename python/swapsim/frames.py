"""Plain dicts to pandas DataFrames, with nested fields flattened into dotted columns.

:func:`flatten` is the one rule every frame uses, and the one ``swapsim run --format csv``
uses for its header: nested objects join their keys with dots (``vmstat.pswpin``), list
items are numbered (``block.0.reads.dispatches``), and empty objects and lists leave no
column. It needs no pandas; the ``*_frame`` functions do, and say so when it is missing.
"""

from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

__all__ = ["flatten", "runs_frame", "sweep_frame", "summary_frame", "series_frame"]


def flatten(value: Any, prefix: str = "") -> Dict[str, Any]:
    """``value`` (a JSON-shaped dict) as one flat dict of dotted keys to scalars."""
    cells: Dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        key = (lambda k: f"{prefix}.{k}" if prefix else str(k))
        if isinstance(value, Mapping):
            for k, v in value.items():
                walk(key(k), v)
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                walk(key(i), v)
        else:
            cells[prefix] = value

    walk(prefix, value)
    return cells


def _pandas(caller: str):
    try:
        import pandas
    except ImportError as err:
        raise ImportError(
            f"swapsim.{caller} builds a pandas DataFrame and pandas is not installed: "
            "pip install pandas (or pip install 'swapsim[pandas]'); "
            "swapsim.flatten gives the same columns as plain dicts"
        ) from err
    return pandas


def _without(doc: Mapping[str, Any], exclude: Iterable[str]) -> Dict[str, Any]:
    dropped = set(exclude)
    return {key: value for key, value in doc.items() if key not in dropped}


def runs_frame(docs: Iterable[Mapping[str, Any]], exclude: Sequence[str] = ("scenario", "host")):
    """One row per run document (what :meth:`Scenario.run` returns), one column per
    flattened field. The top-level fields in ``exclude`` are left out: by default the
    resolved scenario and the host's timings, as ``swapsim run --format csv`` does."""
    pandas = _pandas("runs_frame")
    return pandas.DataFrame([flatten(_without(doc, exclude)) for doc in docs])


def _setting_columns(row: Mapping[str, Any], cells: Dict[str, Any]) -> Dict[str, Any]:
    """A row's varied settings under their own keys, first; a report column of the same
    name moves to ``report.<name>``."""
    settings = dict(row.get("settings", {}))
    out: Dict[str, Any] = {"index": row["index"], **settings}
    for key, value in cells.items():
        out[f"report.{key}" if key in out else key] = value
    return out


def sweep_frame(rows: Iterable[Mapping[str, Any]], exclude: Sequence[str] = ("scenario",)):
    """One row per run of a sweep (per variant, or per variant and seed with several
    seeds): ``index``, the varied settings under their keys (``swap.page_cluster``),
    ``seed``, ``status``, then the flattened report without the fields in ``exclude``."""
    pandas = _pandas("sweep_frame")
    records = []
    for row in rows:
        runs = row["runs"] if "runs" in row else [{"status": row["status"], "report": row["report"]}]
        for run in runs:
            report = _without(run["report"], exclude)
            cells = {"seed": run["report"].get("seed"), "status": run["status"], **flatten(report)}
            records.append(_setting_columns(row, cells))
    return pandas.DataFrame(records)


def summary_frame(rows: Iterable[Mapping[str, Any]]):
    """One row per variant of a sweep run with several seeds or a baseline: ``index``, the
    varied settings, ``status``, then per metric of the command's table its mean under
    the metric's name (``pgmajfault``), the half-width of its 95 % interval
    (``pgmajfault_ci95``, with several seeds) and its ratio to the baseline's mean
    (``pgmajfault_ratio``, with a baseline): the columns of ``swapsim sweep --format csv``."""
    pandas = _pandas("summary_frame")
    records = []
    for row in rows:
        if "summary" not in row:
            raise ValueError(
                f"variant {row.get('index')} has no summary: sweep with seeds > 1 or a baseline"
            )
        cells: Dict[str, Any] = {"status": row["status"]}
        for metric, cell in row["summary"].items():
            cells[metric] = cell.get("mean")
            if "ci95" in cell:
                cells[f"{metric}_ci95"] = cell["ci95"]
            if "ratio" in cell:
                cells[f"{metric}_ratio"] = cell["ratio"]
        records.append(_setting_columns(row, cells))
    return pandas.DataFrame(records)


def series_frame(doc: Mapping[str, Any], key: str = "series"):
    """The list of dicts at ``doc[key]`` as a DataFrame: one row per item, one column per
    flattened field. By default the run's time series (a scenario run with
    ``report.sample_every`` set): ``series`` is an object whose ``samples`` are the
    per-interval records, and an object with a ``samples`` list stands for that list.
    Any other list of records works too (``tasks``), and ``key`` may be dotted to reach a
    nested one (``jobs.jobs``)."""
    pandas = _pandas("series_frame")
    value: Any = doc
    for part in key.split("."):
        if not isinstance(value, Mapping) or part not in value:
            raise KeyError(f"the document has no field {key!r}")
        value = value[part]
    if isinstance(value, Mapping) and isinstance(value.get("samples"), list):
        value = value["samples"]
    if not isinstance(value, list) or not all(isinstance(item, Mapping) for item in value):
        raise TypeError(f"{key!r} is not a list of records (dicts)")
    return pandas.DataFrame([flatten(item) for item in value])
