"""JSON Schemas of everything gctool writes as JSON: code files, export documents, and every
JSON document of a command.  They ship in ``gctool/schema/`` and ``gctool schema NAME`` prints them.

* ``code`` and ``export`` (the file formats) and ``design`` (the ``design -o FILE`` JSON
  summary) are written by hand.
* The others are generated from the report dataclasses (their ``to_dict()`` is
  ``dataclasses.asdict`` with non-finite floats as null), so they cannot drift: run
  ``python -m gctool.schemas`` after changing a report, and a test fails when a shipped file
  is stale.  A command's schema (``show``, ``simulate``, ``export-report``) accepts any of the
  reports the command can print.
* ``verify``, ``attack`` and ``bound`` write one envelope however many FILEs they are given
  (:mod:`gctool.cli.batch`): their schemas are that envelope with the command's reports in
  ``files[].report``; ``batch`` is the envelope of any of the three.

Draft 2020-12.  Only the standard library is imported here.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

SCHEMA_DIR = Path(__file__).parent / "schema"
DRAFT = "https://json-schema.org/draft/2020-12/schema"

#: hand-written schemas (NAME -> file)
FILES = {"code": "code-v1.schema.json", "export": "export-v1.schema.json",
         "design": "design-v1.schema.json"}

#: the commands over FILE... whose JSON document is the envelope of gctool.cli.batch
ENVELOPED = ("verify", "attack", "bound")

# The report classes each command may print, imported when a schema is generated.
def _verify() -> tuple[type, ...]:
    """:data:`gctool.results.VerifyResult`, a level profile's and partial work's reports."""
    from gctool import results as r

    return (r.VerifyReport, r.SequentialVerifyReport, r.TreeVerifyReport, r.ProfileReport,
            r.PartialReport, r.SpectrumReport)


def _attack() -> tuple[type, ...]:
    """:data:`gctool.results.AttackResult`, the threshold, :data:`~gctool.results.CurveResult`
    and a level profile's report."""
    from gctool import results as r

    return (r.WorstReport, r.ThresholdReport, r.CurveReport, r.ProfileReport,
            r.SpectrumReport, r.SpectrumCurveReport)


def _bound() -> tuple[type, ...]:
    from gctool.results import BoundResult

    return typing.get_args(BoundResult)


def _show() -> tuple[type, ...]:
    from gctool.viz.picture import ShowReport

    return (ShowReport,)


def _simulate() -> tuple[type, ...]:
    from gctool.sim.run import SimulationReport
    from gctool.sim.sweep import SweepReport

    return (SimulationReport, SweepReport)


def _train() -> tuple[type, ...]:
    from gctool.trainer.report import TrainReport

    return (TrainReport,)


def _export() -> tuple[type, ...]:
    from gctool.reports import ExportReport

    return (ExportReport,)


#: generated schemas: NAME -> (title, the report classes the command may print)
REPORTS: dict[str, tuple[str, Callable[[], tuple[type, ...]]]] = {
    "batch": ("gctool verify/attack/bound JSON document", tuple),
    "verify": ("gctool verify JSON document", _verify),
    "attack": ("gctool attack JSON document", _attack),
    "bound": ("gctool bound JSON document", _bound),
    "show": ("gctool show JSON document", _show),
    "simulate": ("gctool simulate JSON document", _simulate),
    "train": ("gctool train JSON document", _train),
    "export-report": ("gctool export -o FILE JSON document (the summary; the file itself: "
                      "'export')",
                      _export),
}


def names() -> list[str]:
    """Every schema NAME, in the order ``gctool schema`` lists them."""
    return list(FILES) + list(REPORTS)


def filename(name: str) -> str:
    if name in FILES:
        return FILES[name]
    if name == "batch":
        return "batch-v1.schema.json"
    return f"{name}-v1.schema.json" if name.endswith("-report") else f"{name}-report-v1.schema.json"


def load(name: str) -> dict[str, Any]:
    """The shipped schema NAME."""
    if name not in FILES and name not in REPORTS:
        raise KeyError(name)
    doc: dict[str, Any] = json.loads((SCHEMA_DIR / filename(name)).read_text(encoding="utf-8"))
    return doc


def text(name: str) -> str:
    """The shipped schema NAME, as its file holds it."""
    load(name)  # KeyError for unknown names
    return (SCHEMA_DIR / filename(name)).read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# generation from the report dataclasses
# ---------------------------------------------------------------------------------------------
def _type(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """The schema of a value of Python type ``tp`` after ``Report.to_dict``."""
    origin = typing.get_origin(tp)
    if tp is Any or tp is object:
        return {}
    if tp is type(None):
        return {"type": "null"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:  # non-finite floats are written as null
        return {"type": ["number", "null"]}
    if tp is str:
        return {"type": "string"}
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        _define(tp, defs)
        return {"$ref": f"#/$defs/{tp.__name__}"}
    if origin in (typing.Union, types.UnionType):
        options = [_type(a, defs) for a in typing.get_args(tp)]
        return {"anyOf": options}
    if origin in (list, tuple, set, frozenset) or tp in (list, tuple):
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        item = _type(args[0], defs) if len(set(args)) == 1 else {}
        return {"type": "array", "items": item} if item else {"type": "array"}
    if origin is dict or tp is dict:
        kv = typing.get_args(tp)
        value = _type(kv[1], defs) if len(kv) == 2 else {}
        return {"type": "object", "additionalProperties": value} if value else {"type": "object"}
    if origin is typing.Literal:
        return {"enum": list(typing.get_args(tp))}
    raise TypeError(f"no JSON Schema for {tp!r}")


def _define(cls: type, defs: dict[str, Any], closed: bool = False) -> None:
    """Add the schema of dataclass ``cls`` to ``defs``.  A report (``closed``) has exactly its
    fields; a nested object may carry more keys (a subclass, e.g. the approximate-code rows
    of ``bound``, adds its own)."""
    if cls.__name__ in defs:
        if closed:
            defs[cls.__name__]["additionalProperties"] = False
        return
    defs[cls.__name__] = {}  # recursion guard
    keys = _keys(cls)
    doc = (cls.__doc__ or "").strip().splitlines()
    node: dict[str, Any] = {"type": "object"}
    if doc and not doc[0].startswith(cls.__name__ + "("):
        node["description"] = doc[0]
    node["required"] = [name for name, _, required in keys if required]
    node["properties"] = {name: _type(tp, defs) for name, tp, _ in keys}
    if closed:
        node["additionalProperties"] = False
    defs[cls.__name__] = node


def _keys(cls: type) -> list[tuple[str, Any, bool]]:
    """(key, Python type, always present) of the JSON object of dataclass ``cls``: its
    ``json_fields()`` when it writes another layout than its fields (the attack reports),
    else its fields; a field with ``omit_none`` metadata is left out when None, one with
    ``json: False`` always."""
    layout = getattr(cls, "json_fields", None)
    if layout is not None:
        return [(name, tp, True) for name, tp in layout()]
    hints = typing.get_type_hints(cls)
    return [(f.name, hints[f.name], not f.metadata.get("omit_none"))
            for f in dataclasses.fields(cls) if f.metadata.get("json", True)]


def generate(name: str) -> dict[str, Any]:
    """The schema NAME built from the report classes (see the module doc)."""
    if name == "batch":
        report = {"type": "object", "description": "the command's report of this file "
                  "(pinned by 'gctool schema verify', 'attack' or 'bound')"}
        return _document(name, report, {}, list(ENVELOPED), _ENVELOPE_DOC)
    title, classes = REPORTS[name]
    defs: dict[str, Any] = {}
    refs = []
    for cls in classes():
        _define(cls, defs, closed=True)
        refs.append({"$ref": f"#/$defs/{cls.__name__}"})
    body = {"anyOf": refs} if len(refs) > 1 else refs[0]
    if name in ENVELOPED:
        return _document(name, body, defs, [name], _ENVELOPE_DOC)
    return _document(name, body, defs, [], "")


_ENVELOPE_DOC = ("One document however many FILEs were given (one, several, or none for "
                 "'bound -n/-k/-s', whose entry has file null). exit_code is the process's exit "
                 "status: the worst (largest) of the files'; ok is exit_code == 0, so it "
                 "includes every gate (--max-condition, --strict, --require-tolerance, "
                 "--check). The report of a file is in files[].report, or why it could not be "
                 "audited in files[].error.")


def _document(name: str, body: dict[str, Any], defs: dict[str, Any], commands: list[str],
              envelope: str) -> dict[str, Any]:
    """The schema document NAME: ``body`` itself, or (``commands``) the envelope of
    :mod:`gctool.cli.batch` whose reports are ``body``."""
    head = {"$schema": DRAFT, "$id": f"https://gctool.invalid/schema/{filename(name)}",
            "title": REPORTS[name][0]}
    generated = ("Generated from gctool's report classes (python -m gctool.schemas). "
                 "Numbers that are not finite are written as null.")
    if not commands:
        return {**head, "description": generated, **body, "$defs": defs}
    status = {"type": "integer", "description": "0 ok, 1 a finding or a failed gate, 2 a file "
              "that could not be read or audited (bad input, over budget)"}
    audited = {"type": "object", "required": ["file", "exit_code", "ok", "report"],
               "additionalProperties": False,
               "properties": {"file": _FILE, "exit_code": {"enum": [0, 1]},
                              "ok": {"type": "boolean"}, "report": body}}
    failed = {"type": "object", "required": ["file", "exit_code", "ok", "error"],
              "additionalProperties": False,
              "properties": {"file": _FILE, "exit_code": {"const": 2},
                             "ok": {"const": False},
                             "error": {"type": "string",
                                       "description": "why the file could not be audited"}}}
    doc = {**head, "description": f"{envelope} {generated}", "type": "object",
           "required": ["version", "command", "ok", "exit_code", "files"],
           "additionalProperties": False,
           "properties": {"version": {"const": 1},
                          "command": {"const": commands[0]} if len(commands) == 1
                          else {"enum": commands},
                          "ok": {"type": "boolean",
                                 "description": "every file passes (exit_code == 0)"},
                          "exit_code": status,
                          "files": {"type": "array", "items": {"oneOf": [audited, failed]}}}}
    if defs:
        doc["$defs"] = defs
    return doc


#: the ``file`` of an envelope entry
_FILE = {"type": ["string", "null"],
         "description": "the FILE argument ('stdin' for '-'; null for 'bound -n/-k/-s')"}


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def write_all(directory: Path = SCHEMA_DIR) -> list[Path]:
    """Regenerate the report schemas into ``directory``."""
    from gctool._files import atomic_write

    written = []
    for name in REPORTS:
        path = directory / filename(name)
        atomic_write(str(path), render(generate(name)).encode("utf-8"))
        written.append(path)
    return written


if __name__ == "__main__":  # python -m gctool.schemas [DIR]: regenerate the report schemas
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and sys.argv[1].startswith("-")):
        sys.exit("usage: python -m gctool.schemas [DIRECTORY]")
    for p in write_all(Path(sys.argv[1]) if len(sys.argv) == 2 else SCHEMA_DIR):
        print(p)
