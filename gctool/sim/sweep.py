"""``gctool simulate`` with ``sweep`` PARAM=V1,V2,...: one simulation per value of one parameter, on
the same seed (common random numbers across the values), as one table and one plot.

Parameters (:data:`PARAMS`):

* ``s``: every file is designed again with that s (same scheme, n, field, seed, order and the
  scheme's own design parameters recorded in the file); a file whose scheme takes no s (the
  sequential schemes, CodedReduce, ...) keeps its design.  The baselines follow the files' s.
* ``mu``: the authors' waiting rule with that μ (the sweep implies ``protocol`` authors).
* ``latency``, ``bandwidth``: the network (``link``; the other one from ``link``, else 0
  latency or infinite bandwidth).
* ``base_comp``: the linear load model's seconds per unit load (a trace with
  ``load_model`` linear).
* a parameter of the delay model: ``shift``, ``rate`` (shifted-exp, markov, bernoulli),
  ``scale``, ``shape`` (pareto), ``p``, ``q``, ``slow`` (markov, bernoulli).

Each contender is a column, named by its role (its file's label, or a baseline's name without
its parameters: ``ignore-stragglers``, ``m-sgc``, ``gc-model``, ...); a cell is its time per
job (mean time per round for single-round schemes; the sum over the rounds / the jobs
decoded for sequential ones) with the mean per round and its interval in the JSON.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gctool.errors import InvalidInput
from gctool.model import GradientCode
from gctool.reports import NOT_JSON, Report
from gctool.sim.delays import DelayModel

#: the parameters a sweep can vary (the delay models' own parameters too)
PARAMS = ("s", "mu", "latency", "bandwidth", "base_comp", "shift", "rate", "scale", "shape",
          "p", "q", "slow")
#: values per sweep
MAX_VALUES = 64


@dataclass
class SweepReport(Report):
    param: str
    values: list[float]
    delay: str
    iterations: int
    seed: int
    protocol: str
    #: role of every contender met, in order of appearance (the table's columns)
    columns: list[str]
    #: per value: {"value", "results": [{role, name, time_per_job, mean, speedup}]}
    rows: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    ok: bool = True  # no sequential job missed its deadline at any value
    method: str = "monte-carlo"
    exact: bool = False
    time_unit: str = "s"
    intervals: str = ""
    plot: dict[str, Any] | None = field(default=None, metadata=NOT_JSON)


def parse_sweep(spec: str) -> tuple[str, list[float]]:
    """``PARAM=V1,V2,...`` (at most :data:`MAX_VALUES` finite numbers)."""
    param, eq, rest = spec.partition("=")
    param = param.strip()
    if not eq or param not in PARAMS:
        raise InvalidInput(f"`sweep`: expected PARAM=V1,V2,... with PARAM one of "
                           f"{', '.join(PARAMS)}, got {spec!r}")
    try:
        values = [float(x) for x in rest.replace(" ", "").split(",") if x]
    except ValueError:
        raise InvalidInput(f"`sweep`: the values of {param} must be numbers") from None
    if not values or len(values) > MAX_VALUES or not all(math.isfinite(v) for v in values):
        raise InvalidInput(f"`sweep`: give 1 to {MAX_VALUES} finite values of {param}")
    if CHANGES.get(param) is _new_s and any(v != int(v) or v < 0 for v in values):
        raise InvalidInput("`sweep`: s takes whole numbers >= 0")
    return param, values


def redesign(code: GradientCode, s: int) -> GradientCode | None:
    """``code``'s design again with ``s`` stragglers: its scheme, n, k, field, seed and the
    scheme's design parameters recorded in the file (None: the scheme takes no s).  A
    multi-message order is not kept (the file records the order, not how it was made)."""
    from gctool.codes import design
    from gctool.registry import SCHEMES

    info = SCHEMES.get(code.scheme)
    if info is None or "s" not in info.uses:
        return None
    given = {p.name: code.params[p.name] for p in info.params if p.name in code.params}
    if "k" in info.uses:
        given["k"] = code.k
    return design(code.scheme, n=code.n, s=s, field=code.field, seed=code.seed, **given)


Inputs = tuple[list[tuple[str, GradientCode]], DelayModel, dict[str, Any]]


def _new_s(value: float, codes: list[tuple[str, GradientCode]], delay: DelayModel,
           options: dict[str, Any], notes: list[str]) -> Inputs:
    out = []
    for label, code in codes:
        again = redesign(code, int(value))
        note = f"{label}: its scheme ({code.scheme}) takes no s; kept as designed"
        if again is None and note not in notes:
            notes.append(note)
        out.append((label, code if again is None else again))
    return out, delay, options


def _new_mu(value: float, codes: list[tuple[str, GradientCode]], delay: DelayModel,
            options: dict[str, Any], notes: list[str]) -> Inputs:
    return codes, delay, {**options, "protocol": "authors", "mu": value}


def _link_with(key: str) -> Callable[..., Inputs]:
    def change(value: float, codes: list[tuple[str, GradientCode]], delay: DelayModel,
               options: dict[str, Any], notes: list[str]) -> Inputs:
        from gctool.sim.network import Link

        link = dataclasses.replace(options.get("link") or Link(0.0, float("inf")),
                                   **{key: value})
        if not (link.latency >= 0 and link.bandwidth > 0):
            raise InvalidInput(f"`sweep`: {key} = {value:g} is not a valid link")
        return codes, delay, {**options, "link": link}

    return change


#: how each parameter that is not the delay model's own changes a run's inputs
CHANGES = {"s": _new_s, "mu": _new_mu, "latency": _link_with("latency"),
           "bandwidth": _link_with("bandwidth")}


def _changed(param: str, value: float, codes: list[tuple[str, GradientCode]],
             delay: DelayModel, options: dict[str, Any], notes: list[str]) -> Inputs:
    """The inputs of the run at ``value``."""
    change = CHANGES.get(param)
    if change is not None:
        return change(value, codes, delay, options, notes)
    swept = delay.sweep(param, value)
    if swept is None:
        raise InvalidInput(f"`sweep`: the delay model {delay.label} has no parameter {param}")
    return codes, swept, options


def sweep(codes: list[tuple[str, GradientCode]], delay: DelayModel, param: str,
          values: list[float], *, plot: str | os.PathLike[str] | None = None,
          **options: Any) -> SweepReport:
    """One :func:`gctool.sim.run.simulate` per value of ``param`` (``options`` are its
    keywords; ``seed`` None: one fresh seed for every value)."""
    from gctool.sim.run import simulate

    if options.get("seed") is None:
        from gctool.seeds import fresh_seed

        options["seed"] = fresh_seed()
    if options.get("train") is not None:
        raise InvalidInput("`sweep` and `train` exclude each other (training is not swept)",
                           param="sweep")
    if param == "mu":  # the sweep runs the authors' protocol at each mu
        if options.get("protocol", "authors") != "authors":
            raise InvalidInput(f"`protocol` {options['protocol']} does not apply with a `sweep` "
                               "of mu: it runs the authors' protocol at each mu",
                               param="protocol")
        if options.get("mu") is not None:
            raise InvalidInput("`mu` does not apply with a `sweep` of mu: the sweep sets it",
                               param="mu")
    notes: list[str] = []
    columns: list[str] = []
    rows: list[dict[str, Any]] = []
    last = None
    for value in values:
        c, d, o = _changed(param, value, codes, delay, options, notes)
        rep = simulate(c, d, **o)
        last = rep
        results: list[dict[str, Any]] = []
        for r in rep.rows:
            if r["role"] not in columns:
                columns.append(r["role"])
            results.append({"role": r["role"], "name": r["name"],
                            "time_per_job": r["time_per_job"], "mean": r["mean"],
                            "speedup": r["speedup"], "deadline_misses": r["deadline_misses"]})
        rows.append({"value": value, "delay": rep.delay, "results": results})
    assert last is not None
    notes += [x for x in last.notes if x not in notes]
    report = SweepReport(param, list(values), last.delay, last.iterations, last.seed,
                         last.protocol, columns, rows, notes,
                         ok=all(x["deadline_misses"] == 0 for r in rows for x in r["results"]),
                         time_unit=last.time_unit, intervals=last.intervals)
    if plot is not None:
        from gctool._files import atomic_write

        data = render_svg(report)
        atomic_write(plot, data)
        report.plot = {"path": os.fspath(plot), "bytes": len(data)}
    return report


def render_svg(report: SweepReport) -> bytes:
    """Time per job against the swept value, one line per contender."""
    from gctool.viz.svgkit import TEXT, Canvas, line_chart, text

    cv = Canvas(f"gctool simulate, swept over {report.param}")
    text(cv.root, 16, 24, f"gctool simulate — {report.delay}, {report.iterations} rounds, seed "
         f"{report.seed}, {report.protocol}'s protocol, sweep over {report.param}",
         font_size=13, font_weight="bold", fill=TEXT)
    series = []
    for role in report.columns:
        xs, ys = [], []
        for row in report.rows:
            cell = next((x for x in row["results"] if x["role"] == role), None)
            if cell is not None:
                xs.append(float(row["value"]))
                ys.append(float(cell["time_per_job"]))
        series.append((role, xs, ys))
    bottom = line_chart(cv, 90.0, 64, series, cls="sweep",
                        title=f"time per job against {report.param} (one line per scheme)",
                        xlabel=report.param, ylabel=f"time per job [{report.time_unit}]")
    longest = max((len(r) for r in report.columns), default=10)
    cv.extend(90.0 + 460 + 16 + 6.2 * longest, bottom + 10)
    return cv.bytes()
