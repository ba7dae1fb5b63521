"""The library speaks in its callers' terms (issue 27): its messages name parameters in
backquotes (```max_work```), never command-line flags, and the CLI renders them as its flags
from one table (:mod:`gctool.cli.params`).  And the budget is one value passed with each
request: no mutable module-level budget, one meter class."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import click
from pysource import package_files

from gctool import limits
from gctool.cli.main import cli
from gctool.cli.params import flag, in_cli_terms
from gctool.errors import PARAM

PACKAGE = Path(__file__).parents[2] / "gctool"
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]+")
#: lines outside gctool/cli/ that may still spell a flag (the issue's target: at most 20)
MOST_FLAG_LINES = 20


def _library() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if "cli" not in p.relative_to(PACKAGE).parts]


def _library_trees() -> dict[Path, ast.Module]:
    """The parsed modules of :func:`_library` by their path in the package."""
    return {path: tree for path, tree in package_files().items() if "cli" not in path.parts}


def test_at_most_20_library_lines_spell_a_command_line_flag() -> None:
    found = [f"{p.relative_to(PACKAGE)}:{i}: {line.strip()}" for p in _library()
             for i, line in enumerate(p.read_text().splitlines(), 1) if FLAG.search(line)]
    assert len(found) <= MOST_FLAG_LINES, f"{len(found)} lines:\n" + "\n".join(found)


def _docstrings(tree: ast.Module) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _message_params() -> dict[str, str]:
    """Every parameter the library names in a string that is not a docstring -> where."""
    out: dict[str, str] = {}
    for path, tree in _library_trees().items():
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    id(node) not in docs:
                for name in PARAM.findall(node.value):
                    out.setdefault(name, f"{path}:{node.lineno}")
    return out


def _cli_flags() -> set[str]:
    """Every option of every command (design's schemes included)."""
    flags: set[str] = set()

    def walk(cmd: click.Command, ctx: click.Context) -> None:
        for p in cmd.params:
            flags.update(o for o in p.opts if o.startswith("-"))
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None:
                    walk(sub, click.Context(sub, parent=ctx, info_name=name))

    walk(cli, click.Context(cli, info_name="gctool"))
    return flags


def test_every_parameter_the_library_names_is_a_flag_of_some_command() -> None:
    named = _message_params()
    assert {"max_work", "max_sets", "method", "sample"} <= set(named), sorted(named)
    flags = _cli_flags()
    missing = {name: where for name, where in named.items() if flag(name) not in flags}
    assert not missing, missing


def test_the_cli_renders_parameters_as_flags_and_leaves_the_rest() -> None:
    text = "raise `max_work` or `max_sets`, use `method`=bnb; ``max_work`` and 'max_work' stay"
    assert in_cli_terms(text) == ("raise --max-work or --max-sets, use --method=bnb; "
                                  "``max_work`` and 'max_work' stay")
    assert in_cli_terms("`s` stragglers, `straggler_set`, `lam`") == "-s stragglers, --set, " \
                                                                     "--lambda"


def test_no_mutable_module_level_budget() -> None:
    """limits.py holds constants only; no module keeps a budget in a global; no test resets
    one."""
    for name, value in vars(limits).items():
        if not name.startswith("__") and name != "annotations":
            assert name.isupper() and isinstance(value, int | float | str | tuple), name
    for path in _library():
        text = path.read_text()
        assert "_WORK_OPTION" not in text and "set_max_work" not in text, path
    conftest = (Path(__file__).parents[1] / "conftest.py").read_text()
    assert "max_work" not in conftest and "budget" not in conftest


def test_one_meter_class() -> None:
    """Work charged as it is spent goes to gctool.budget.Meter only."""
    chargers = []
    for path, tree in _library_trees().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                    isinstance(f, ast.FunctionDef) and f.name == "charge" for f in node.body):
                chargers.append(f"{path}:{node.name}")
    assert chargers == ["budget.py:Meter"], chargers


#: a noun with its plural in parentheses ('set(s)', 'worker(s)'): messages say the number
#: they mean (gctool.wording.counted / noun)
HEDGED_PLURAL = re.compile(r"[a-z]\(s\)")


def test_messages_say_the_right_number() -> None:
    """No string of gctool but docstrings (messages, reports, plots: the CLI's included)
    hedges a plural as 'set(s)': gctool.wording.counted and noun say '1 set', '2 sets'."""
    found = []
    for path, tree in package_files().items():
        docs = _docstrings(tree)
        found += [f"{path}:{node.lineno}: {node.value.strip()[:60]}"
                  for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and id(node) not in docs and HEDGED_PLURAL.search(node.value)]
    assert found == [], "\n".join(found)


def test_counted_and_noun_agree_with_the_count() -> None:
    from gctool.wording import counted, noun

    assert [counted(c, "set") for c in (0, 1, 2, 20_000)] == \
        ["0 sets", "1 set", "2 sets", "20,000 sets"]
    assert (noun(1, "stands", "stand"), noun(3, "stands", "stand")) == ("stands", "stand")
