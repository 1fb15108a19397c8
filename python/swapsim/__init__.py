"""swapsim from Python: load a scenario, edit it, run it, sweep it, validate the model.

Everything comes back as plain dicts shaped like the JSON documents ``swapsim ...
--format json`` prints, and the ``*_frame`` functions turn them into pandas DataFrames
with flattened column names (``vmstat.pswpin``, ``block.0.reads.dispatches``)::

    import swapsim
    sc = swapsim.load("scenarios/zipf-memcg.toml", set={"memcg.limit": "64MiB"})
    doc = sc.set("swap.page_cluster", 0).run(seed=7)
    doc["vmstat"]["pswpin"]
    rows = swapsim.sweep(sc, vary={"swap.page_cluster": [0, 1, 3]}, seeds=3)
    swapsim.summary_frame(rows)

Errors from the library raise :class:`SwapsimError`, whose message names the file, the
line or the field, as the command's do. The same scenario and seed give the same
document, ``host`` (wall-clock figures) aside.
"""

import json as _json
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Union

from . import _native
from ._native import SwapsimError
from .frames import flatten, runs_frame, series_frame, summary_frame, sweep_frame

__version__ = _native.__version__

__all__ = [
    "Scenario",
    "SwapsimError",
    "load",
    "from_toml",
    "sweep",
    "validate",
    "case_scenario",
    "flatten",
    "runs_frame",
    "sweep_frame",
    "summary_frame",
    "series_frame",
]


def _value_text(value: Any) -> str:
    """A setting's value as the text after ``=`` of ``--set key=value``.

    A string is passed as typed, so ``"128MiB"`` and ``"cluster"`` mean what they mean on
    the command line (and ``"3"`` is the integer 3 there too); any other value (a number,
    a boolean, a list, a dict such as ``{"preset": "nvme"}``) is written as its TOML form.
    """
    if isinstance(value, str):
        return value
    if value is None:
        raise TypeError("None is not a setting's value")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return _native.toml_value(_json.dumps(value))


class Scenario:
    """A scenario as written, with any edits applied: not yet validated.

    Immutable: :meth:`set` and :meth:`with_seed` return a new scenario. Build one with
    :func:`load` or :func:`from_toml`.
    """

    __slots__ = ("_native",)

    def __init__(self, native: "_native.Scenario") -> None:
        self._native = native

    @property
    def name(self) -> str:
        """How messages and reports name the scenario: its path as given, or ``<inline>``."""
        return self._native.name

    def set(self, key: str, value: Any) -> "Scenario":
        """The scenario with the dotted ``key`` (``memcg.limit``,
        ``swap.devices.0.model.preset``) set to ``value``, as ``--set key=value`` does."""
        return Scenario(self._native.set(key, _value_text(value)))

    def edits(self, settings: Mapping[str, Any]) -> "Scenario":
        """The scenario with every ``key: value`` of ``settings`` set, in order."""
        scenario = self
        for key, value in settings.items():
            scenario = scenario.set(key, value)
        return scenario

    def with_seed(self, seed: int) -> "Scenario":
        """The scenario with its root seed replaced (``--seed``)."""
        return Scenario(self._native.with_seed(seed))

    def check(self) -> None:
        """Validates the scenario (and opens its trace) without running it; raises
        :class:`SwapsimError` if it is not valid."""
        self._native.check()

    def run(self, seed: Optional[int] = None) -> Dict[str, Any]:
        """Runs the scenario once (at ``seed`` when given) and returns the document of
        ``swapsim run --format json``: ``swapsim_version``, ``seed``, the resolved
        ``scenario``, every report field (``vmstat``, ``block``, ``fault_latency``, ...),
        ``trace`` for a trace workload, and ``host``. The GIL is released while it runs."""
        return _json.loads(self._native.run(seed))

    def __repr__(self) -> str:
        return f"swapsim.Scenario({self.name!r})"


def load(path: Union[str, "os.PathLike[str]"], set: Optional[Mapping[str, Any]] = None) -> Scenario:
    """Reads a scenario file (relative paths in it are relative to its folder) and applies
    the edits of ``set``, in order."""
    return Scenario(_native.load(path)).edits(set or {})


def from_toml(
    text: str,
    set: Optional[Mapping[str, Any]] = None,
    name: Optional[str] = None,
    base_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> Scenario:
    """Parses a scenario from TOML text, named ``name`` in messages (``<inline>`` by
    default), with relative paths resolved against ``base_dir`` (the current folder by
    default), and applies the edits of ``set``, in order."""
    return Scenario(_native.from_toml(text, name, base_dir)).edits(set or {})


def _axis_text(key: str, values: Union[str, Iterable[Any]]) -> str:
    if isinstance(values, str):
        return values
    texts = [_value_text(value) for value in values]
    for text in texts:
        if "," in text:
            raise ValueError(
                f"vary[{key!r}]: the value {text!r} holds a comma; "
                "a varied value is a number, a boolean or a string without one"
            )
    return ",".join(texts)


def sweep(
    scenario: Scenario,
    vary: Mapping[str, Union[str, Iterable[Any]]],
    seeds: int = 1,
    baseline: Optional[Union[Mapping[str, Any], str]] = None,
    set: Optional[Mapping[str, Any]] = None,
    jobs: Optional[int] = None,
) -> List[Dict[str, Any]]:
    """Runs ``scenario`` once per combination of the ``vary`` settings, as ``swapsim sweep``.

    ``vary`` maps a dotted key to its values: a list (``[0, 1, 3]``, ``["cluster",
    "none"]``, ``range(0, 4)``) or the command's text (``"0..5"``, ``"cluster,vma"``);
    several keys give the cross product, the first varying slowest. ``set`` edits every
    variant first. Each variant runs at ``seeds`` seeds (the scenario's seed, +1, ...);
    ``baseline`` (``{"swap.readahead": "cluster"}`` or ``"swap.readahead=cluster"``) names
    the variant each is compared with. ``jobs`` threads run variants at once (all cores by
    default; the results do not depend on it).

    Returns one dict per variant, in order: ``index``, ``settings`` (the varied keys and
    values), ``status`` ("ok" or what failed in the simulated system), and ``report`` (the
    run document without ``host``), or with several seeds ``runs`` (one ``{seed, status,
    report}`` per seed). With several seeds or a baseline, ``summary`` holds per metric of
    the command's table ``{mean, ci95, ratio}`` (see :func:`summary_frame`).
    """
    axes = [(key, _axis_text(key, values)) for key, values in vary.items()]
    fixed = [f"{key}={_value_text(value)}" for key, value in (set or {}).items()]
    if isinstance(baseline, Mapping):
        if len(baseline) != 1:
            raise ValueError("baseline: give one varied key and its value, e.g. {'swap.readahead': 'cluster'}")
        ((key, value),) = baseline.items()
        baseline = f"{key}={_value_text(value)}"
    return _json.loads(_native.sweep(scenario._native, axes, fixed, seeds, baseline, jobs))


def validate(
    dir: Union[str, "os.PathLike[str]"],
    cases: Optional[Iterable[str]] = None,
    lru: str = "classic",
    seeds: Optional[int] = None,
) -> Dict[str, Any]:
    """Replays the real-kernel cases of ``dir`` (e.g. ``validation/linux-6.18``; only the
    ``cases`` ids given, if any) and compares them figure by figure; returns the document
    of ``swapsim validate --format json``. ``lru="mglru"`` replays under MGLRU (not a
    validation: the kernel ran the classic LRU); ``seeds`` replays each case at fewer
    seeds than the default, quicker and coarser."""
    return _json.loads(_native.validate(dir, list(cases or []), lru, seeds))


def case_scenario(
    dir: Union[str, "os.PathLike[str]"],
    case: str,
    seed: int = 1,
    lru: str = "classic",
) -> Scenario:
    """The scenario that :func:`validate` replays case ``case`` of ``dir`` with at
    ``seed``, as ``swapsim validate --case CASE --scenario-of-seed SEED`` prints it (its
    traces by absolute paths): its ``run()`` gives that replay's report, and
    ``.set("report.sample_every", "10ms").run()`` the same with a time series."""
    text = _native.case_scenario(dir, case, seed, lru)
    return from_toml(text, name=f"case {case} seed {seed}")

