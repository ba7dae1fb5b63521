"""The shipped JSON Schemas (``gctool schema NAME``) describe what gctool really writes, and the
reference that output cites (``gctool reference``) ships with it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
from click.testing import CliRunner

import gctool
from gctool import schemas
from gctool.cli.main import cli

from helpers import run

ROOT = Path(__file__).parents[2]


def _json(*args: str, code: int | None = None) -> Any:
    r = run(*args)
    assert code is None or r.exit_code == code, r.stderr
    return json.loads(r.stdout)


def _valid(doc: Any, name: str) -> None:
    jsonschema.Draft202012Validator(schemas.load(name)).validate(doc)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("schemas")
    codes = {"frc": gctool.design("frc", 6, 2),
             "crc": gctool.design("cyclic", 6, 2, seed=1),
             "cplx": gctool.design("cyclic-mds", 6, 2, field="complex"),
             "gf": gctool.design("cyclic-mds", 6, 2, field="GF(7)"),
             "gf2m": gctool.design("cyclic-mds", 5, 1, field="GF(2^4)"),
             "comm": gctool.design("comm", 4, 1, m=2),
             "srsgc": gctool.design("sr-sgc", 6, burst=1, window=3, lam=2),
             "tree": gctool.design("coded-reduce", fanout=4, depth=2, tolerance=1),
             "bibd": gctool.design("bibd", design="fano")}
    out = {}
    for name, code in codes.items():
        out[name] = str(d / f"{name}.json")
        gctool.write_code(code, out[name])
    bad = d / "bad.json"
    bad.write_text("{}")
    out["bad"] = str(bad)
    out["dir"] = str(d)
    return out


@pytest.mark.parametrize("name", schemas.names())
def test_shipped_schemas_are_valid_and_printed(name: str) -> None:
    schema = schemas.load(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert _json("schema", name) == schema
    assert (ROOT / "gctool" / "schema" / schemas.filename(name)).is_file()


@pytest.mark.parametrize("name", list(schemas.REPORTS))
def test_generated_schemas_are_fresh(name: str) -> None:
    assert schemas.load(name) == schemas.generate(name), "run: python -m gctool.schemas"


def test_schema_list_and_unknown_names(runner: CliRunner) -> None:
    listed = _json("schema", "--json")["schemas"]
    assert [row["name"] for row in listed] == schemas.names()
    r = runner.invoke(cli, ["schema", "exprot"])
    assert r.exit_code == 2 and "did you mean 'export'" in r.stderr


def test_verify_reports_match(files: dict[str, str]) -> None:
    for key in ("frc", "crc", "cplx", "gf", "srsgc", "tree"):
        _valid(_json("verify", files[key], "--json"), "verify")
    _valid(_json("verify", files["crc"], "-s", "3", "--json", code=1), "verify")
    _valid(_json("verify", files["crc"], "--sample", "5", "--seed", "1", "--json"),
           "verify")
    _valid(_json("verify", files["crc"], "--max-condition", "10", "--json"), "verify")


def test_attack_bound_show_simulate_reports_match(files: dict[str, str]) -> None:
    for args in (["-s", "3"], ["--threshold", "--require-tolerance", "2"], ["--curve"],
                 ["-s", "2", "--random", "-p", "0.2"]):
        _valid(_json("attack", files["crc"], *args, "--json"), "attack")
    for args in ([files["frc"]], [files["bibd"], "--epsilon", "0.5"], [files["srsgc"]],
                 ["-n", "10", "-k", "10", "-s", "3"]):
        _valid(_json("bound", *args, "--json"), "bound")
    _valid(_json("show", files["gf"], "--curve", "--stragglers", "0,1", "--json"),
           "show")
    _valid(_json("simulate", files["frc"], "--iterations", "20", "--seed", "1",
                 "--json"), "simulate")


def test_one_schema_for_one_file_and_many(files: dict[str, str]) -> None:
    """verify/attack/bound --json: one file, several, an unreadable one and bound's -n/-k/-s
    all validate against the command's schema and against batch, and every entry carries
    its file name and exit status."""
    for command, extra in (("verify", []), ("attack", ["--threshold"]), ("bound", ["--check"])):
        runs = [([files["frc"]], 0), ([files["frc"], files["srsgc"], files["bad"]], 2),
                ([files["bad"]], 2)]
        for args, code in runs:
            doc = _json(command, *args, *extra, "--json", code=code)
            _valid(doc, command)
            _valid(doc, "batch")
            assert doc["exit_code"] == code and doc["ok"] == (code == 0)
            assert [e["file"] for e in doc["files"]] == args
            assert all(isinstance(e["exit_code"], int) for e in doc["files"])
        with pytest.raises(jsonschema.ValidationError):  # the command's schema pins reports
            _valid(dict(doc, command="attack" if command != "attack" else "verify"), command)
    params = _json("bound", "-n", "10", "-k", "10", "-s", "3", "--json")
    _valid(params, "bound")
    assert params["files"][0]["file"] is None
    broken = dict(doc, exit_code="2")
    with pytest.raises(jsonschema.ValidationError):
        _valid(broken, "batch")


def test_a_failed_gate_is_not_ok(files: dict[str, str]) -> None:
    doc = _json("verify", files["crc"], "--max-condition", "10", "--json", code=1)
    _valid(doc, "verify")
    entry = doc["files"][0]
    assert doc["ok"] is False and entry["ok"] is False and entry["exit_code"] == 1
    assert entry["report"]["ok"] is False and entry["report"]["verdict"] == "ok"
    assert entry["report"]["gates"]["failures"]


def test_design_summary_and_export_report_match(files: dict[str, str]) -> None:
    out = str(Path(files["dir"]) / "summary.json")
    _valid(_json("design", "expander", "--graph", "petersen", "-s", "2", "-o", out,
                 "--json"), "design")
    plan = str(Path(files["dir"]) / "plan.npz")
    _valid(_json("export", files["crc"], "-o", plan, "--decoders", "--json"),
           "export-report")


@pytest.mark.parametrize("key", ["frc", "cplx", "gf", "gf2m", "comm"])
def test_export_documents_match_and_record_their_target(runner: CliRunner,
                                                        files: dict[str, str],
                                                        key: str) -> None:
    r = runner.invoke(cli, ["export", files[key], "-o", "-", "--decoders"])
    doc = json.loads(r.stdout)
    _valid(doc, "export")
    _valid(json.loads(Path(files[key]).read_text()), "code")
    code = gctool.read_code(files[key])
    T = np.array(doc["target"])
    if code.field.kind == "complex":  # [re, im] pairs
        T = T[..., 0] + 1j * T[..., 1]
    assert T.shape == (code.m, code.k * code.m)
    for u in range(code.m):  # piece-major block of ones
        expected = np.zeros(code.k * code.m)
        expected[u * code.k:(u + 1) * code.k] = 1
        assert T[u].tolist() == expected.tolist()
    doc["target"] = "ones"
    with pytest.raises(jsonschema.ValidationError):
        _valid(doc, "export")


def test_reference_ships_and_covers_every_citation(runner: CliRunner) -> None:
    from gctool.reference import reference_path

    shipped = reference_path().read_text(encoding="utf-8")
    assert shipped == (ROOT / "docs" / "reference.md").read_text(encoding="utf-8"), \
        "docs/reference.md and gctool/data/reference.md must be the same text"
    assert runner.invoke(cli, ["reference"]).stdout == shipped
    assert runner.invoke(cli, ["reference", "--path"]).stdout.strip() == str(reference_path())
    assert json.loads(runner.invoke(cli, ["reference", "--json"]).stdout) == {
        "path": str(reference_path()), "text": shipped}
    assert json.loads(runner.invoke(cli, ["reference", "--path", "--json"]).stdout) == {
        "path": str(reference_path())}  # where it is, not its text
    headings = set(re.findall(r"(?m)^#{2,3} (\d+(?:\.\d+)?)[. ]", shipped))
    cited = set()
    for path in (ROOT / "gctool").rglob("*.py"):
        cited |= set(re.findall(r"reference §(\d+(?:\.\d+)?)([ab])?", path.read_text()))
    assert cited
    for number, part in cited:
        assert number in headings, f"output cites reference §{number}, which does not exist"
        if part:
            section = shipped.split(f"### {number} ", 1)[1].split("\n### ", 1)[0]
            assert f"**({part})" in section, f"reference §{number}{part} does not exist"
    for tag in ("[P", "[D]"):
        assert tag in shipped
    assert "'gctool reference'" in runner.invoke(cli, ["bound", "--help"]).stdout


def test_completion_command_prints_the_committed_scripts(runner: CliRunner) -> None:
    from gctool.cli.completion import SHELLS

    for shell, name in SHELLS.items():
        assert runner.invoke(cli, ["completion", shell]).stdout == \
            (ROOT / "completions" / name).read_text()
    assert runner.invoke(cli, ["completion", "tcsh"]).exit_code == 2


@pytest.mark.parametrize("key", ["frc", "comm"])
def test_npz_export_is_the_json_export(runner: CliRunner, files: dict[str, str],
                                       key: str, tmp_path: Path) -> None:
    """The NPZ's arrays plus its meta validate against the export schema, and 'support' is the
    same n x k matrix of 0/1 integers in both (m > 1 included: which partitions a worker
    computes, any piece)."""
    npz, js = tmp_path / "plan.npz", tmp_path / "plan.json"
    for out in (npz, js):
        assert runner.invoke(cli, ["export", files[key], "-o", str(out)]).exit_code == 0
    z = np.load(npz, allow_pickle=False)
    doc = json.loads(str(z["meta"]))
    doc.update({name: z[name].tolist() for name in ("B", "support", "target")})
    _valid(doc, "export")
    code = gctool.read_code(files[key])
    assert z["support"].shape == (code.n, code.k) and z["support"].dtype.kind == "i"
    assert json.loads(js.read_text())["support"] == z["support"].tolist()
    assert z["support"].tolist() == code.support.astype(int).tolist()
