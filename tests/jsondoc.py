"""Reading the ``--json`` documents of ``verify``, ``attack`` and ``bound``: one envelope
(``gctool schema batch``) however many FILEs were given."""

from __future__ import annotations

import json
from typing import Any


def envelope(text: str) -> dict[str, Any]:
    """The envelope, checked for the keys and the agreement of ``ok`` and ``exit_code``."""
    doc: dict[str, Any] = json.loads(text)
    assert set(doc) == {"version", "command", "ok", "exit_code", "files"}, sorted(doc)
    assert doc["ok"] == (doc["exit_code"] == 0)
    for entry in doc["files"]:
        assert entry["ok"] == (entry["exit_code"] == 0)
    return doc


def report(text: str) -> dict[str, Any]:
    """The report of the one file of a run (its envelope checked)."""
    doc = envelope(text)
    assert len(doc["files"]) == 1, doc
    entry: dict[str, Any] = doc["files"][0]
    assert "report" in entry, entry
    return entry["report"]


def no_report(text: str) -> bool:
    """The ``--json`` output of a run that ended in an error: an envelope whose files carry
    their errors and no report (checked), or nothing at all (usage errors stop before it)."""
    if text == "":
        return True
    doc = envelope(text)
    assert not doc["ok"] and all("report" not in f and "error" in f for f in doc["files"]), doc
    return True


def loads(text: str) -> Any:
    """A ``--json`` document as tests of one report read it: the report of a one-file
    envelope (the envelope checked), any other document as it is."""
    doc = json.loads(text)
    if isinstance(doc, dict) and {"command", "files"} <= set(doc):
        envelope(text)
        if len(doc["files"]) == 1 and "report" in doc["files"][0]:
            return doc["files"][0]["report"]
    return doc


def untimed(doc: Any) -> Any:
    """A JSON document without its timings (``elapsed*``, ``seconds*`` keys), to compare runs."""
    if isinstance(doc, dict):
        return {k: untimed(v) for k, v in doc.items() if not k.startswith(("elapsed", "seconds"))}
    if isinstance(doc, list):
        return [untimed(v) for v in doc]
    return doc
