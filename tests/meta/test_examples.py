"""Every example in ``--help`` (root, commands, schemes) and every ``gctool`` command in the
README's and the docs' ``sh`` blocks runs as written.

Each line is first checked by ``bash -n`` (so unquoted ``GF(7)`` and the like fail), then run
in-process (one interpreter: galois compiles each field once) in a temporary directory holding
the files the examples assume.  A line may chain commands with ``&&`` and ``|`` and write
its output with ``> FILE`` (``~`` is the test's temporary home); ``jq`` stages
run the real jq when it is installed and otherwise check that their input is JSON, and
``mkdir -p DIR`` makes DIR (a redirection into a missing directory fails, as in a shell).  A line
passes when it exits 0 or 1 (1 is a finding, which several examples show on purpose) with no
usage error; a comment ``# exit N`` on the line pins the status.  Commands that need a running
service (a Dask scheduler) are shown in ``text`` blocks instead.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

import gctool
from gctool.cli.main import COMMANDS, cli
from gctool.registry import SCHEMES

ROOT = Path(__file__).parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def help_examples() -> list[tuple[str, str]]:
    runner = CliRunner()
    out = []
    for path in [[]] + [[c] for c in COMMANDS] + [["design", s] for s in SCHEMES]:
        text = runner.invoke(cli, [*path, "--help"]).stdout
        assert "Examples:" in text, path
        block = text.split("Examples:", 1)[1].splitlines()[1:]
        for line in block:
            if not line.strip():
                break
            out.append((" ".join(["gctool", *path]) + " --help", line.strip()))
    return out


def doc_commands() -> list[tuple[str, str]]:
    """``gctool`` lines of ``sh`` blocks, and complete commands quoted in table rows (not
    synopses with placeholders such as FILE... or [--seed X])."""
    out = []
    for doc in DOCS:
        text = doc.read_text()
        for block in re.findall(r"```sh\n(.*?)```", text, re.S):
            for line in block.splitlines():
                if line.startswith("gctool "):
                    out.append((doc.name, line))
        for row in (line for line in text.splitlines() if line.startswith("|")):
            for span in re.findall(r"`(gctool [^`]+)`", row):
                if len(span.split()) >= 4 and not re.search(r"\.\.\.|\[|\b[A-Z]{2,}", span):
                    out.append((doc.name + " (table)", span))
    return out


def _unique(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each command line once (the README repeats many help examples)."""
    first: dict[str, int] = {}
    out: list[tuple[str, str]] = []
    for where, line in pairs:
        key = line.split("#", 1)[0].strip()
        if key not in first:
            first[key] = len(out)
            out.append((where, line))
        elif re.search(r"#\s*exit \d", line):  # keep the copy that pins an exit status
            out[first[key]] = (where, line)
    return out


EXAMPLES = _unique(help_examples() + doc_commands())


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files the examples assume (created with the library, not with the examples)."""
    d = tmp_path_factory.mktemp("examples")
    files = {"frc.json": gctool.design("frc", 6, 2),
             "crc.json": gctool.design("cyclic", 10, 3, seed=1),
             "code.json": gctool.design("cyclic", 8, 2, seed=1),
             "big.json": gctool.design("cyclic", 20, 3, seed=1),
             "rs.json": gctool.design("rs", 4, 1, k=6),
             "fano.json": gctool.design("bibd", design="fano"),
             "a.json": gctool.design("frc", 4, 1),
             "b.json": gctool.design("frc", 6, 1),
             "encoded.json": gctool.design("encoded", 12, 2, k=6, frame="gaussian", seed=1),
             "cr.json": gctool.design("coded-reduce", seed=1, fanout=4, depth=2, tolerance=1)}
    for name, code in files.items():
        gctool.write_code(code, d / name)
    curve = CliRunner().invoke(cli, ["attack", str(d / "code.json"), "--curve", "--json"])
    (d / "curve.json").write_text(curve.stdout)
    (d / "p.txt").write_text("0.1, 0.2, 0.5, 0.3, 0.2, 0.1\n")
    return d


def _stage(argv: list[str], stdin: str | None) -> tuple[int, str, str]:
    if argv[0] == "gctool":
        r = CliRunner().invoke(cli, argv[1:], input=stdin)
        return r.exit_code, r.stdout, r.stderr
    if argv[0] in ("less", "head"):  # pagers: the output reaches them
        return 0, stdin or "", ""
    if argv[:2] == ["mkdir", "-p"]:  # the directories an install line makes
        for path in argv[2:]:
            Path(path).expanduser().mkdir(parents=True, exist_ok=True)
        return 0, "", ""
    assert argv[0] == "jq", f"examples may pipe into gctool, jq or a pager only: {argv}"
    if shutil.which("jq"):
        p = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=120,
                           check=False)
        return p.returncode, p.stdout, p.stderr
    json.loads(stdin or "")
    return 0, "", ""


def _split(tokens: list[str], sep: str) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    for tok in tokens:
        if tok == sep:
            parts.append([])
        else:
            parts[-1].append(tok)
    return parts


def run_line(line: str) -> tuple[int, str, str]:
    lex = shlex.shlex(line, posix=True, punctuation_chars="|&>")
    lex.whitespace_split = True
    code, out, err = 0, "", ""
    for chain in _split(list(lex), "&&"):
        stdin = None
        for stage in _split(chain, "|"):
            target = None
            if ">" in stage:  # 'command > FILE'
                stage, target = stage[:stage.index(">")], stage[stage.index(">") + 1]
            code, out, err = _stage(stage, stdin)
            if target is not None:
                path = Path(target).expanduser()
                assert path.parent.is_dir(), f"{path.parent} does not exist: mkdir -p it first"
                path.write_text(out)
                out = ""
            stdin = out
        if code != 0:
            break
    return code, out, err


@pytest.mark.parametrize("where,line", EXAMPLES, ids=[f"{w}: {x}" for w, x in EXAMPLES])
def test_example_runs_as_written(where: str, line: str, workdir: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    syntax = subprocess.run(["bash", "-n", "-c", line], capture_output=True, text=True,
                            timeout=120, check=False)
    assert syntax.returncode == 0, f"not valid shell: {syntax.stderr}"
    monkeypatch.chdir(workdir)
    monkeypatch.setenv("HOME", str(workdir / "home"))
    code, out, err = run_line(line)
    pinned = re.search(r"#\s*exit (\d+)", line)
    expected = {int(pinned.group(1))} if pinned else {0, 1}
    assert code in expected, f"exit {code}: {err.strip()[-300:]}"
    assert "error:" not in err, err


def test_examples_are_found() -> None:
    """The extraction sees the examples (a format change must not silently empty the list)."""
    where = {w for w, _ in EXAMPLES}
    assert "README.md" in where and "gctool design cyclic --help" in where
    assert len(EXAMPLES) > 80


def quick_start() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```sh\n(.*?)```", section, re.S)
    return [line for line in block.splitlines() if line.startswith("gctool ")]


def test_quick_start_runs_in_order_in_an_empty_directory(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's quick start, line by line in an empty directory: each line exits with the
    status its comment gives (``# exit N, "text"``; 0 without one), prints the quoted text,
    and writes no file an earlier line wrote."""
    lines = quick_start()
    assert len(lines) >= 8
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    written: set[str] = set()
    for line in lines:
        comment = re.search(r'#\s*exit (\d+)(?:, "([^"]*)")?', line)  # none: exit 0
        targets = re.findall(r"(?:-o|>)\s+(\S+)", line.split("#", 1)[0])
        assert not set(targets) & written, f"overwrites an earlier file: {line}"
        written |= set(targets)
        code, out, err = run_line(line)
        assert code == (int(comment.group(1)) if comment else 0), (line, err)
        assert ((comment and comment.group(2)) or "") in out, (line, out[-500:])
        for target in targets:
            assert (tmp_path / target).is_file(), (line, target)
