"""A Dask checkpoint must match the run it claims to resume, or be refused in one line.

A real checkpoint is written by a Dask run (an in-process cluster), then edited the ways
reliability review 2 did (and more); every edit is refused with InvalidInput naming the file
(exit 2 under the CLI, one line), never an internal error and never a result built from the
edited values.  Special files (a FIFO, a directory, stdin) are refused before they are read."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from distributed import LocalCluster

from gctool.algebra.fields import parse_field
from gctool.audit.attack import attack
from gctool.audit.distributed import Checkpoint, DaskRunner, local_cluster_options
from gctool.audit.verify import verify
from gctool.cli.main import cli
from gctool.errors import InvalidInput
from gctool.io import write_code
from gctool.model import GradientCode

import helpers

CHUNK = 8


def _small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    helpers.small_chunks(monkeypatch, CHUNK, processes=True)


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    _small_chunks(monkeypatch)


@pytest.fixture(scope="module")
def cluster() -> Any:
    with LocalCluster(**local_cluster_options(1, processes=False, threads=2),
                      protocol="tcp://") as c:
        yield c


def code16() -> GradientCode:
    """Generic real n = 16, k = 6: verify ok at s = 3 (560 sets in 8-set tasks)."""
    B = np.random.default_rng(7).standard_normal((16, 6))
    return GradientCode(B, parse_field("real"), 3)


def _audit(what: str, runner: Any) -> Any:
    if what == "verify":
        return verify(code16(), method="exhaustive", runner=runner)
    return attack(code16(), 3, method="exhaustive", symmetry=False, runner=runner)


@pytest.fixture(scope="module")
def written(cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A checkpoint of each audit (its text) and the audit's report, written once."""
    out = {}
    folder = tmp_path_factory.mktemp("ckpt")
    with pytest.MonkeyPatch.context() as mp:
        _small_chunks(mp)
        for what in ("verify", "attack"):
            path = folder / f"{what}.ckpt"
            ref = _audit(what, DaskRunner(scheduler=cluster.scheduler_address,
                                          checkpoint=str(path), key=what))
            out[what] = (path.read_text(), ref)
    return out


def _written(written: dict[str, Any], tmp_path: Path, what: str) -> tuple[Path, Any]:
    """A fresh copy of the module's checkpoint of ``what`` in ``tmp_path``, and the report."""
    text, ref = written[what]
    path = tmp_path / f"{what}.ckpt"
    path.write_text(text)
    return path, ref


def _entries(doc: dict[str, Any]) -> dict[str, Any]:
    (run,) = doc["runs"].values()
    return dict(run)


def _first(doc: dict[str, Any]) -> dict[str, Any]:
    """The data of the entry of the second task (the pilot's range is not a Dask task)."""
    (run,) = doc["runs"].values()
    return run[sorted(run, key=lambda k: json.loads(k)[0])[0]]


Edit = Callable[[dict[str, Any]], None]


def _set_run(value: Any) -> Edit:
    def edit(doc: dict[str, Any]) -> None:
        (key,) = doc["runs"]
        doc["runs"][key] = value
    return edit


def _set_entry(value: Any) -> Edit:
    def edit(doc: dict[str, Any]) -> None:
        (run,) = doc["runs"].values()
        run[sorted(run)[0]] = value
    return edit


def _set(field: str, value: Any) -> Edit:
    def edit(doc: dict[str, Any]) -> None:
        _first(doc)["data"][field] = value
    return edit


def _drop(field: str) -> Edit:
    def edit(doc: dict[str, Any]) -> None:
        del _first(doc)["data"][field]
    return edit


def _set_type(value: Any) -> Edit:
    def edit(doc: dict[str, Any]) -> None:
        _first(doc)["type"] = value
    return edit


def _add_key(key: str) -> Edit:
    def edit(doc: dict[str, Any]) -> None:
        (run,) = doc["runs"].values()
        run[key] = copy.deepcopy(next(iter(run.values())))
    return edit


VERIFY_EDITS: dict[str, Edit] = {
    "run is a list": _set_run([1, 2]),
    "run is a string": _set_run("x"),
    "entry is a list": _set_entry([]),
    "unknown type": _set_type("Nope"),
    "type of attack": _set_type("PeakSummary"),
    "missing type": lambda doc: _first(doc).pop("type"),
    "data is null": lambda doc: _first(doc).__setitem__("data", None),
    "data is a list": lambda doc: _first(doc).__setitem__("data", []),
    "extra field": _set("extra", 1),
    "max_norm text": _set("max_norm", "ab"),
    "max_norm short": _set("max_norm", [1.0]),
    "weakest nested": _set("weakest", [[1]]),
    "weakest number": _set("weakest", 5),
    "evaluated text": _set("evaluated", "x"),
    "evaluated negative": _set("evaluated", -10**12),
    "evaluated huge": _set("evaluated", 10**30),
    "evaluated short": _set("evaluated", 3),
    "evaluated bool": _set("evaluated", True),
    "no evaluated": _drop("evaluated"),
    "fail_set outside": _set("fail_set", [999, 1000, 1001]),
    "fail_set text": _set("fail_set", "abc"),
    "fail_set unsorted": _set("fail_set", [2, 1, 0]),
    "fail_set of another range": _set("fail_set", [13, 14, 15]),
    "index of another task": _set("index", 99),
    "weight below evaluated": _set("weight", 0),
    "key not of this run": _add_key("[1, 0, 999999]"),
    "key not json": _add_key("abc"),
}


@pytest.mark.parametrize("edit", sorted(VERIFY_EDITS))
def test_an_edited_verify_checkpoint_is_refused(cluster: Any, written: Any, tmp_path: Path,
                                                edit: str) -> None:
    path, ref = _written(written, tmp_path, "verify")
    doc = json.loads(path.read_text())
    VERIFY_EDITS[edit](doc)
    path.write_text(json.dumps(doc))
    run = DaskRunner(scheduler=cluster.scheduler_address, checkpoint=str(path), key="verify")
    with pytest.raises(InvalidInput, match=r"checkpoint .*verify\.ckpt") as info:
        verify(code16(), method="exhaustive", runner=run)
    assert "\n" not in str(info.value)


ATTACK_EDITS: dict[str, Edit] = {
    "peaks text": _set("peaks", "x"),
    "peak set outside": _set("peaks", [[0.5, [0, 1, 99]]]),
    "peak of another range": _set("peaks", [[0.5, [13, 14, 15]]]),
    "peak value text": _set("peaks", [[[1], [0, 1, 2]]]),
    "checked negative": _set("checked", -1),
    "type of verify": _set_type("ChunkSummary"),
}


@pytest.mark.parametrize("edit", sorted(ATTACK_EDITS))
def test_an_edited_attack_checkpoint_is_refused(cluster: Any, written: Any, tmp_path: Path,
                                                edit: str) -> None:
    path, ref = _written(written, tmp_path, "attack")
    doc = json.loads(path.read_text())
    ATTACK_EDITS[edit](doc)
    path.write_text(json.dumps(doc))
    run = DaskRunner(scheduler=cluster.scheduler_address, checkpoint=str(path), key="attack")
    with pytest.raises(InvalidInput, match=r"checkpoint .*attack\.ckpt"):
        attack(code16(), 3, method="exhaustive", symmetry=False, runner=run)


@pytest.mark.parametrize("what", ["verify", "attack"])
def test_an_intact_checkpoint_resumes_to_the_same_report(cluster: Any, written: Any,
                                                         tmp_path: Path, what: str) -> None:
    """Every recorded entry passes the checks: the rerun submits nothing, same report."""
    path, ref = _written(written, tmp_path, what)
    again = DaskRunner(scheduler=cluster.scheduler_address, checkpoint=str(path), key=what)
    rep = _audit(what, again)
    assert again.stats["submitted"] == 0 and again.stats["resumed"] == again.stats["tasks"] > 10
    strip = ("elapsed_s", "jobs", "estimate")
    assert ({k: v for k, v in rep.to_dict().items() if k not in strip}
            == {k: v for k, v in ref.to_dict().items() if k not in strip})


@pytest.mark.parametrize("content", ['{"format": "gctool-checkpoint/1", "runs": []}',
                                     '{"format": "other", "runs": {}}', "[1, 2]", "{",
                                     '{"format": "gctool-checkpoint/1"}', ""])
def test_a_malformed_file_is_refused(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.ckpt"
    path.write_text(content)
    with pytest.raises(InvalidInput, match="checkpoint"):
        Checkpoint(path)


def test_special_files_are_refused_before_reading(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for bad in (fifo, tmp_path, "-"):
        with pytest.raises(InvalidInput, match="checkpoint"):
            Checkpoint(bad)
        with pytest.raises(InvalidInput, match="checkpoint"):
            DaskRunner(checkpoint=str(bad))


@pytest.mark.parametrize("edit", ["evaluated negative", "fail_set outside", "run is a list"])
def test_the_cli_refuses_an_edited_checkpoint_in_one_line(cluster: Any, tmp_path: Path,
                                                          edit: str) -> None:
    code = tmp_path / "code.json"
    write_code(code16(), str(code))
    ck = tmp_path / "run.ckpt"
    args = ["verify", str(code), "--method", "exhaustive", "--json", "--executor", "dask",
            "--scheduler", cluster.scheduler_address, "--checkpoint", str(ck)]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.stderr
    doc = json.loads(ck.read_text())
    VERIFY_EDITS[edit](doc)
    ck.write_text(json.dumps(doc))
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2
    envelope = json.loads(res.stdout)  # --json: the envelope carries the file's error, no report
    assert envelope["ok"] is False and "report" not in envelope["files"][0]
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith("gctool: error: cannot use checkpoint "), line


def test_the_cli_refuses_a_fifo_at_once(tmp_path: Path) -> None:
    code = tmp_path / "code.json"
    write_code(code16(), str(code))
    fifo = tmp_path / "ck"
    os.mkfifo(fifo)
    res = CliRunner().invoke(cli, ["verify", str(code), "--executor", "dask", "--checkpoint",
                                   str(fifo)])
    assert res.exit_code == 2
    (line,) = res.stderr.strip().splitlines()
    assert "--checkpoint" in line and "not a regular file" in line, line
