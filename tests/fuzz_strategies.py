"""Hypothesis strategies for fuzzing gctool's CLI: broken files, odd arguments, mutated examples.

Generic over the commands in :data:`gctool.cli.main.COMMANDS` and every ``design`` scheme: the
strategies read each command's click parameters (and its help examples) and generate values for
them, so a new command or option is fuzzed without changing this file.  A :class:`Case` says
whether its input is *certainly* invalid (``must_fail``: exit 2 expected) and which output paths
it may write.  The runner and the contract checks are in ``tests/fuzz_cli.py``.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import numpy as np
from hypothesis import strategies as st

from gctool.algebra.fields import parse_field
from gctool.cli.main import COMMANDS, cli
from gctool.io import code_bytes, code_to_doc, code_to_meta, dumps_document, encode_matrix
from gctool.limits import MAX_COLUMNS, MAX_N
from gctool.model import GradientCode

from corpus import CRC3, GF7_B

# ---------------------------------------------------------------------------------------------
# fixtures: valid codes and the scratch directory
# ---------------------------------------------------------------------------------------------

def fixture_codes() -> dict[str, GradientCode]:
    """Small valid codes over every kind of field (n <= 6, so every audit is instant)."""
    real, gf7 = parse_field("real"), parse_field("GF(7)")
    gf16 = parse_field("GF(2^4)").resolved()
    rng = np.random.default_rng(5)
    return {
        "frc": GradientCode(np.kron(np.eye(2), np.ones((3, 3))), real, 2, "frc", seed=None,
                            provenance={"command": "gctool design frc -n 6 -s 2"}),
        "crc": GradientCode(np.array(CRC3), real, 1, "cyclic", seed=1),
        "gf7": GradientCode(np.array(GF7_B), gf7, 2, "cyclic-mds"),
        "gf16": GradientCode(rng.integers(1, 16, (4, 4)), gf16, 1, "custom"),
        "cplx": GradientCode(np.array(CRC3) * (1 + 2j), parse_field("complex"), 1, "custom"),
        "pieces": GradientCode(np.ones((4, 6)), real, 1, "custom", params={"m": 2}),
    }


CODES = fixture_codes()
DOCS = {name: code_to_doc(code) for name, code in CODES.items()}
#: fields that certainly cannot hold each fixture's entries
MISMATCH = {
    "frc": ["complex"], "crc": ["GF(2)", "GF(7)", "complex"], "gf7": ["GF(2)", "GF(5)", "complex"],
    "gf16": ["GF(2)", "GF(3)", "complex"], "cplx": ["real", "GF(7)"], "pieces": ["complex"],
}

#: names of the scratch directory (all relative: cases run with the directory as cwd)
INPUTS = [f"{name}.json" for name in CODES] + [f"{name}.npz" for name in CODES]
OUTPUTS = ["out.json", "out.npz", "out.svg", "existing.json", "-"]
BAD_OUTPUTS = ["adir", "nodir/x.json", "afile/x.json", "a" * 300 + ".json", "bad\0name.json"]
BAD_INPUTS = ["missing.json", "adir", "afile/x.json", "loop", "a" * 300, "bad\0name", "empty",
              "/dev/null", "dangling"]


def make_workspace(root: Path) -> dict[str, bytes]:
    """Create the scratch directory; return the regular files it holds (name -> bytes)."""
    root.mkdir(parents=True, exist_ok=True)
    files: dict[str, bytes] = {}
    for name, code in CODES.items():
        files[f"{name}.json"] = code_bytes(code, npz=False)
        files[f"{name}.npz"] = code_bytes(code, npz=True)
    files["existing.json"] = b"precious bytes that only a successful write may replace\n"
    files["afile"] = b"a plain file, not a directory\n"
    files["empty"] = b""
    for name, data in files.items():
        (root / name).write_bytes(data)
    (root / "adir").mkdir(exist_ok=True)
    for link, to in (("loop", "loop"), ("dangling", "nowhere/x.json")):
        if not (root / link).is_symlink():
            os.symlink(to, root / link)
    return files


Snapshot = dict[str, tuple[str, bytes | str]]


def snapshot(root: Path) -> Snapshot:
    """Every entry under ``root``: ('file', bytes), ('dir', '') or ('link', target)."""
    out: Snapshot = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_dir():
                out[rel] = ("dir", "")
            else:
                out[rel] = ("file", p.read_bytes())
    return out


def restore(root: Path, files: dict[str, bytes], before: Snapshot) -> None:
    """Undo whatever a case did to the scratch directory."""
    now = snapshot(root)
    for rel in sorted(set(now) - set(before), reverse=True):
        p = root / rel
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
    for name, data in files.items():
        if now.get(name) != ("file", data):
            (root / name).write_bytes(data)


# ---------------------------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------------------------
@dataclass
class Case:
    """One CLI invocation: arguments, stdin, extra files to create, and what must happen."""

    argv: list[str]
    kind: str  # the category, for reports
    stdin: bytes = b""
    files: dict[str, bytes] = field(default_factory=dict)
    must_fail: bool = False  # certainly invalid: exit 2 expected
    outputs: tuple[str, ...] = ()  # paths the command may create or replace on success

    def show(self) -> str:
        """The case as one line (long arguments abbreviated, so that reports stay readable)."""
        def token(t: str) -> str:
            return repr(t) if len(t) <= 60 else f"{t[:12]!r}...({len(t)} chars)"

        extra = f" <stdin {len(self.stdin)} bytes>" if self.stdin else ""
        files = f" files={sorted(self.files)}" if self.files else ""
        return f"[{self.kind}] gctool {' '.join(map(token, self.argv))}{extra}{files}"


def command_names() -> list[str]:
    return list(COMMANDS)


def get_command(name: str) -> click.Command:
    ctx = click.Context(cli)
    cmd = cli.get_command(ctx, name)
    assert cmd is not None, name
    return cmd


def leaf_commands() -> list[tuple[list[str], click.Command]]:
    """(prefix, command) for every runnable command: plain commands and each design scheme."""
    out: list[tuple[list[str], click.Command]] = []
    for name in command_names():
        cmd = get_command(name)
        if isinstance(cmd, click.Group):
            ctx = click.Context(cmd)
            for sub in cmd.list_commands(ctx):
                leaf = cmd.get_command(ctx, sub)
                if leaf is not None:
                    out.append(([name, sub], leaf))
        else:
            out.append(([name], cmd))
    return out




def is_output(param: click.Parameter) -> bool:
    """Is ``param`` an output file?  Every output option of gctool has the one
    :class:`~gctool.cli.options.OutputPath` type (a ``--checkpoint`` file is read and written:
    it is fuzzed like an output)."""
    from gctool.cli.options import OutputPath

    return isinstance(param.type, OutputPath)


def is_input_path(param: click.Parameter) -> bool:
    return isinstance(param.type, click.Path) and not is_output(param)


def reads_code_file(cmd: click.Command) -> click.Argument | None:
    """The positional input-file argument of a command (``FILE``), if it has one."""
    for p in cmd.params:
        if isinstance(p, click.Argument) and is_input_path(p):
            return p
    return None


def option_flag(p: click.Option) -> str:
    longs = [o for o in p.opts if o.startswith("--")]
    return longs[0] if longs else p.opts[0]


# -- broken files ------------------------------------------------------------------------------
def _dumps(doc: Any) -> bytes:
    return json.dumps(doc).encode()


def _npz(arrays: dict[str, Any], allow_pickle: bool = False) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, allow_pickle=allow_pickle, **arrays)
    return buf.getvalue()


def _with(doc: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = dict(doc)
    out.update(changes)
    return out


BIG = [10**30, -(10**30), 2**63, 2**64 + 1, 10**400]


#: categories of broken JSON code files ("Bad input")
JSON_KINDS = [
    "format", "version", "missing-key", "n", "k", "s", "ragged", "shape", "nonfinite",
    "outside-field", "field-mismatch", "field-string", "params", "meta-types", "top-level",
    "trailing", "truncated", "digits", "deep", "garbage", "not-utf8", "scheme-params",
    "repeated-key", "surrogate", "control-scheme", "poly-degree",
]
#: categories of broken NPZ code files
NPZ_KINDS = [
    "truncated", "pickle", "missing-array", "meta-type", "B-dtype", "B-shape", "nonfinite",
    "outside-field", "meta-json", "meta-has-B", "header-shape", "zip-size", "not-zip-body",
]


_SCHEME_DOCS: dict[str, dict[str, Any]] = {}
#: per scheme, the params keys whose every value in HOSTILE_VALUES is out of its schema
HOSTILE_KEYS = {
    "bcc": ["batches", "holders"], "coded-reduce": ["fanout", "depth", "tolerance"],
    "sr-sgc": ["load", "window", "lambda", "burst"], "m-sgc": ["load", "window", "lambda"],
    "hetero": ["p", "load"],
}
HOSTILE_VALUES = ["abc", [1], None, 10**9, 1e300, -1, 10**400, {"a": 1}, True, 1.5]


def scheme_docs() -> dict[str, dict[str, Any]]:
    """Small valid files of the schemes whose params gctool reads back (built once)."""
    if not _SCHEME_DOCS:
        from gctool.codes import design

        kwargs: dict[str, dict[str, Any]] = {
            "bcc": {"n": 6, "seed": 1}, "coded-reduce": {"fanout": 2, "depth": 2, "tolerance": 1},
            "sr-sgc": {"n": 4, "burst": 1, "window": 3, "lam": 2},
            "m-sgc": {"n": 4, "burst": 1, "window": 3, "lam": 2},
            "hetero": {"p": [0.1, 0.2, 0.5, 0.3], "load": 2},
        }
        _SCHEME_DOCS.update({k: code_to_doc(design(k, **v)) for k, v in kwargs.items()})
    return _SCHEME_DOCS


@st.composite
def broken_json(draw: st.DrawFn, kinds: list[str] | None = None) -> tuple[str, bytes]:
    """(category, bytes) of a JSON code file that is certainly invalid."""
    name = draw(st.sampled_from(sorted(DOCS)))
    doc = dict(DOCS[name])
    n, cols = len(doc["B"]), len(doc["B"][0])
    kind = draw(st.sampled_from(kinds or JSON_KINDS))
    if kind == "scheme-params":
        scheme = draw(st.sampled_from(sorted(HOSTILE_KEYS)))
        sdoc = dict(scheme_docs()[scheme])
        key = draw(st.sampled_from(HOSTILE_KEYS[scheme]))
        params = dict(sdoc["params"])
        params[key] = draw(st.sampled_from(HOSTILE_VALUES))
        return kind, _dumps(_with(sdoc, params=params))
    if kind == "repeated-key":
        key = draw(st.sampled_from(["scheme", "n", "field", "B", "format"]))
        text = _dumps(doc).decode()
        return kind, text.replace(f'"{key}":', f'"{key}": {json.dumps(doc[key])}, "{key}":',
                                  1).encode()
    if kind == "surrogate":
        key = draw(st.sampled_from(["scheme", "field"]))
        return kind, _dumps(doc).replace(f'"{key}": '.encode(), f'"{key}": "\\ud800", '
                                         f'"_{key}": '.encode(), 1)
    if kind == "control-scheme":
        value = draw(st.sampled_from(["\x1b[31mRED\x1b[0m", "a\x1b]0;title\x07", "\x00",
                                      "x" * 100_000, "", "\u202e"]))
        return kind, _dumps(_with(doc, scheme=value))
    if kind == "poly-degree":
        poly = draw(st.sampled_from(["x^1000000000 + 1", "x^4 + x^1000000 + 1", "9" * 5000,
                                     "0x" + "f" * 5000, "x^4 + 1"]))
        return kind, _dumps({k: v for k, v in _with(doc, field=f"GF(2^4, {poly})").items()
                             if k != "irreducible_poly"})
    if kind == "format":
        value = draw(st.sampled_from(["gctool.export", "", None, 1, "GCTOOL.CODE", ["x"]]))
        return kind, _dumps(_with(doc, format=value))
    if kind == "version":
        value = draw(st.sampled_from([0, 2, -1, "1", 1.5, None, True, 10**30]))
        return kind, _dumps(_with(doc, version=value))
    if kind == "missing-key":
        key = draw(st.sampled_from(["format", "version", "scheme", "n", "k", "s", "field", "B"]))
        return kind, _dumps({k: v for k, v in doc.items() if k != key})
    if kind in ("n", "k"):
        actual = n if kind == "n" else cols // CODES[name].m
        value = draw(st.sampled_from([0, -1, actual + 1, actual * 2, "6", 6.0, True, None,
                                      *BIG]))
        return kind, _dumps(_with(doc, **{kind: value}))
    if kind == "s":
        value = draw(st.sampled_from([-1, n, n + 5, "1", 1.5, True, None, *BIG]))
        return kind, _dumps(_with(doc, s=value))
    if kind == "ragged":
        rows = [list(r) for r in doc["B"]]
        i = draw(st.integers(0, n - 1))
        if draw(st.booleans()) and len(rows[i]) > 1:
            rows[i].pop()
        else:
            rows[i].append(rows[i][0])
        return kind, _dumps(_with(doc, B=rows))
    if kind == "shape":
        entry: Any = [[1, 0]] if doc["field"] != "complex" else [[[1, 0]]]  # one level too deep
        value = draw(st.sampled_from([[], [[]], [[[1]]], [1, 2, 3], 7, "B", {"a": 1}, None,
                                      [[entry] * cols] * n, doc["B"] + doc["B"][:1],
                                      [r[:-1] for r in doc["B"]] if cols > 1 else [[]]]))
        return kind, _dumps(_with(doc, B=value))
    if kind == "nonfinite":
        token = draw(st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e999"]))
        return kind, _replace_entry(doc, draw(st.integers(0, n * cols - 1)), token)
    if kind == "outside-field":
        return kind, _dumps(_with(doc, B=_outside(draw, doc, name)))
    if kind == "field-mismatch":
        value = draw(st.sampled_from(MISMATCH[name]))
        return kind, _dumps({k: v for k, v in _with(doc, field=value).items()
                             if k != "irreducible_poly"})
    if kind == "field-string":
        value = draw(st.sampled_from([
            "GF(6)", "GF(0)", "GF(1)", "GF(2^0)", "GF(2^65)", "GF(4294967311)", "GF(-7)",
            "quaternion", "", "GF(", "GF(2^4, x^4 + 1)", "GF(2^4, x^3 + 1)", "GF(7, x + 1)",
            "GF(2^4, 7x^4)", 7, None, ["real"]]))
        return kind, _dumps(_with(doc, field=value))
    if kind == "params":
        value = draw(st.sampled_from([
            {"m": 0}, {"m": -1}, {"m": 1.5}, {"m": "2"}, {"m": True}, {"m": 10**30},
            {"m": cols + 1}, {"m": 5}, [], "x", 3]))
        if isinstance(value, dict) and value.get("m") == 5 and cols % 5 == 0:
            value = {"m": 7}
        return kind, _dumps(_with(doc, params=value))
    if kind == "meta-types":
        key, value = draw(st.sampled_from([
            ("scheme", 1), ("scheme", None), ("scheme", []), ("seed", "x"), ("seed", 1.5),
            ("seed", True), ("provenance", []), ("provenance", "x"),
            ("irreducible_poly", "x^2 + 1"), ("irreducible_poly", 12)]))
        if key == "irreducible_poly" and "irreducible_poly" in doc:
            value = "x^4 + 1"  # reducible: (x + 1)^4 over GF(2)
        return kind, _dumps(_with(doc, **{key: value}))
    if kind == "top-level":
        return kind, draw(st.sampled_from([b"[]", b'"x"', b"1", b"null", b"true", b"[{}]"]))
    if kind == "trailing":
        return kind, _dumps(doc) + draw(st.sampled_from([b"x", b"{}", b",", b"]"]))
    if kind == "truncated":
        data = dumps_document(doc).encode().rstrip()
        return kind, data[: draw(st.integers(0, len(data) - 1))]
    if kind == "digits":
        key = draw(st.sampled_from(["n", "k", "s", "version"]))
        return kind, _dumps(doc).replace(f'"{key}": '.encode(), f'"{key}": {"9" * 5000}, '
                                         f'"_{key}": '.encode(), 1)
    if kind == "deep":
        depth = draw(st.sampled_from([50, 5000, 100_000]))
        return kind, _dumps(_with(doc, B=None)).replace(b"null", b"[" * depth + b"]" * depth)
    if kind == "garbage":
        data = draw(st.binary(max_size=200))
        return kind, data if data.strip() else b"\x00" + data
    # not-utf8
    return kind, _dumps(doc).replace(b'"field"', b'"fi\xff\xfeld"', 1)


def _replace_entry(doc: dict[str, Any], index: int, token: str) -> bytes:
    rows = [list(r) for r in doc["B"]]
    flat = [(i, j) for i, r in enumerate(rows) for j in range(len(r))]
    i, j = flat[index % len(flat)]
    rows[i][j] = "@@@"
    return _dumps(_with(doc, B=rows)).replace(b'"@@@"', token.encode())


def _outside(draw: st.DrawFn, doc: dict[str, Any], name: str) -> list[Any]:
    rows = [list(r) for r in doc["B"]]
    i = draw(st.integers(0, len(rows) - 1))
    j = draw(st.integers(0, len(rows[0]) - 1))
    fld = parse_field(doc["field"])
    if fld.kind == "gf":
        rows[i][j] = draw(st.sampled_from([fld.order, -1, 1.5, 2**40, 10**30, "1", None, [1]]))
    elif fld.kind == "complex":
        rows[i][j] = draw(st.sampled_from([1.0, [1.0], [1, 2, 3], ["a", 0], None, True]))
    else:
        rows[i][j] = draw(st.sampled_from(["1", [1, 2], None, True, {"re": 1}]))
    return rows


@st.composite
def broken_npz(draw: st.DrawFn, kinds: list[str] | None = None) -> tuple[str, bytes]:
    """(category, bytes) of an NPZ code file that is certainly invalid."""
    name = draw(st.sampled_from(sorted(CODES)))
    code = CODES[name]
    B = np.asarray(code.B)
    meta = code_to_meta(code)
    text = json.dumps(meta)
    kind = draw(st.sampled_from(kinds or NPZ_KINDS))
    if kind == "truncated":
        data = code_bytes(code, npz=True)
        return kind, data[: draw(st.integers(4, len(data) - 1))]
    if kind == "pickle":
        obj = np.empty(B.shape, dtype=object)
        obj[...] = 1
        which = draw(st.sampled_from(["B", "meta"]))
        arrays = {"B": obj, "meta": np.array(text)} if which == "B" else \
            {"B": B, "meta": np.array({"x": 1}, dtype=object)}
        return kind, _npz(arrays, allow_pickle=True)
    if kind == "missing-array":
        which = draw(st.sampled_from([{"B": B}, {"meta": np.array(text)}, {"A": B}]))
        return kind, _npz(which)
    if kind == "meta-type":
        value = draw(st.sampled_from([np.array(3), np.array([text]), np.array(text.encode()),
                                      np.array([1.0, 2.0])]))
        return kind, _npz({"B": B, "meta": value})
    if kind == "B-dtype":
        value = draw(st.sampled_from([B.astype(str), B.astype("datetime64[s]")
                                      if B.dtype.kind in "iu" else np.zeros(B.shape, "M8[s]"),
                                      np.zeros(B.shape, dtype=[("a", "i4")]),
                                      B.astype(str).astype("S")]))
        return kind, _npz({"B": value, "meta": np.array(text)})
    if kind == "B-shape":
        value = draw(st.sampled_from([B.ravel(), B[None], np.array(1.0), B[:0], B[:-1],
                                      B[:, :-1] if B.shape[1] > 1 else B[:0]]))
        return kind, _npz({"B": value, "meta": np.array(text)})
    if kind == "nonfinite":
        bad = B.astype(np.complex128 if B.dtype.kind == "c" else np.float64)
        bad.flat[draw(st.integers(0, B.size - 1))] = draw(st.sampled_from([np.nan, np.inf]))
        return kind, _npz({"B": bad, "meta": np.array(text)})
    if kind == "outside-field":
        bad = B.copy()
        if code.field.is_finite:
            bad.flat[draw(st.integers(0, B.size - 1))] = draw(st.sampled_from(
                [code.field.order, -1, 2**40]))
        else:
            bad = bad.astype(np.complex128) + 1j  # complex entries in a real code
            if code.field.kind == "complex":
                meta = _with(meta, field="real")
                text = json.dumps(meta)
        return kind, _npz({"B": bad, "meta": np.array(text)})
    if kind == "meta-json":
        value = draw(st.sampled_from(["{", "", "[]", "null", text.replace('"gctool.code"',
                                                                          '"other"'),
                                      text.replace('"version": 1', '"version": 9')]))
        return kind, _npz({"B": B, "meta": np.array(value)})
    if kind == "meta-has-B":
        with_B = _with(meta, B=encode_matrix(B, code.field))
        return kind, _npz({"B": B, "meta": np.array(json.dumps(with_B))})
    if kind == "header-shape":
        data = code_bytes(code, npz=True)
        shape = str(B.shape).encode()
        huge = draw(st.sampled_from([b"(4096000000, 4096)", b"(99999999999999999999,)",
                                     b"(-1, 3)", b"(3, 3, 3, 3)"]))
        return kind, data.replace(b"'shape': " + shape, b"'shape': " + huge, 1)
    if kind == "zip-size":
        return kind, _declare_size(code_bytes(code, npz=True), 2**31)
    # not-zip-body: the zip magic followed by junk
    return kind, b"PK\x03\x04" + draw(st.binary(min_size=1, max_size=300))


def _declare_size(data: bytes, size: int) -> bytes:
    """Patch the central directory so that every member claims ``size`` uncompressed bytes."""
    out = bytearray(data)
    pos = out.find(b"PK\x01\x02")
    while pos >= 0:
        out[pos + 24: pos + 28] = size.to_bytes(4, "little")
        pos = out.find(b"PK\x01\x02", pos + 4)
    return bytes(out)


def mutated(data: bytes) -> st.SearchStrategy[bytes]:
    """Random byte flips, deletions and insertions in valid bytes (may stay valid)."""
    @st.composite
    def strat(draw: st.DrawFn) -> bytes:
        out = bytearray(data)
        for _ in range(draw(st.integers(1, 4))):
            pos = draw(st.integers(0, len(out) - 1))
            op = draw(st.sampled_from(["flip", "delete", "insert"]))
            if op == "flip":
                out[pos] ^= 1 << draw(st.integers(0, 7))
            elif op == "delete":
                del out[pos]
            else:
                out.insert(pos, draw(st.integers(0, 255)))
        return bytes(out)

    return strat()


# -- values for options --------------------------------------------------------------------------
FIELDS_OK = ["real", "complex", "GF(7)", "GF(2)", "GF(2^4)", "GF(31)"]
FIELDS_BAD = ["GF(6)", "GF(1)", "GF(0)", "GF(2^65)", "GF(4294967311)", "quaternion", "", "GF(",
              "GF(7, x + 1)", "GF(2^4, x^3 + 1)", "R^2"]
INT_OK = st.integers(0, 8)
INT_HUGE = st.sampled_from([10**6, 2**31, 2**63, 10**30, -(10**30)])
# (not "١" or "1_0": Python's int() accepts those, so click does too)
INT_BAD_TEXT = st.sampled_from(["x", "1.5", "", "1e3", "--", "0x10", "1_0x"])
FLOAT_OK = st.sampled_from(["0", "0.5", "1e-9", "1", "2.5"])
FLOAT_ODD = st.sampled_from(["nan", "inf", "-inf", "-1", "1e308", "-0"])
FLOAT_BAD_TEXT = st.sampled_from(["x", "", "1,5", "--"])
TEXT_ODD = st.sampled_from(["0,3", "1", "", "x", "-1", "999", "0,0", "1,2,3", "nan", "0,,1",
                            "1;2", "10**9", "0," * 2000, " ", "ω"])


def _is_int_type(t: click.ParamType) -> bool:
    return isinstance(t, click.types.IntParamType)


def _is_float_type(t: click.ParamType) -> bool:
    return isinstance(t, click.types.FloatParamType)


def _outside_range(t: click.ParamType, value: int | float) -> bool:
    lo, hi = getattr(t, "min", None), getattr(t, "max", None)
    if value != value:  # nan
        return False
    return (lo is not None and value < lo) or (hi is not None and value > hi)


@dataclass
class Token:
    """Tokens for one parameter, plus what they imply."""

    args: list[str]
    invalid: bool = False  # certainly rejected
    outputs: tuple[str, ...] = ()


@st.composite
def param_tokens(draw: st.DrawFn, prefix: tuple[str, ...], p: click.Parameter,
                 bad: bool) -> Token | None:
    """Tokens for parameter ``p``; with ``bad``, prefer values that are out of range or odd."""
    is_arg = isinstance(p, click.Argument)
    if isinstance(p, click.Option):
        if p.is_flag or p.count:
            if p.secondary_opts and draw(st.booleans()):
                return Token([p.secondary_opts[0]])
            return Token([option_flag(p)]) if draw(st.booleans()) else None
        if not p.required and draw(st.integers(0, 2)) == 0:
            return None
    t = p.type
    flag = [] if is_arg else [option_flag(p)]  # type: ignore[arg-type]
    if isinstance(t, click.Path):
        if is_output(p):
            name = draw(st.sampled_from(BAD_OUTPUTS if bad else OUTPUTS))
            return Token(flag + [name], invalid=bad, outputs=(name,))
        name = draw(st.sampled_from(BAD_INPUTS if bad else INPUTS))
        return Token(flag + [name], invalid=bad)
    if isinstance(t, click.Choice):
        if bad:
            return Token(flag + [draw(st.sampled_from(["", "nope", "NONE", "a b"]))], True)
        return Token(flag + [draw(st.sampled_from(list(t.choices)))])
    if _is_int_type(t):
        if bad:
            mode = draw(st.sampled_from(["huge", "text", "negative"]))
            if mode == "text":
                return Token(flag + [draw(INT_BAD_TEXT)], invalid=True)
            value = draw(INT_HUGE) if mode == "huge" else draw(st.integers(-5, -1))
        else:
            value = draw(INT_OK)
        invalid = _outside_range(t, value) or semantic_invalid(prefix, p.name or "", value)
        return Token(flag + [str(value)], invalid=invalid)
    if _is_float_type(t):
        if bad and draw(st.booleans()):
            return Token(flag + [draw(FLOAT_BAD_TEXT)], invalid=True)
        text = draw(FLOAT_ODD if bad else FLOAT_OK)
        return Token(flag + [text], invalid=_outside_range(t, float(text)))
    if p.name == "field_spec":
        if bad:
            return Token(flag + [draw(st.sampled_from(FIELDS_BAD))], invalid=True)
        return Token(flag + [draw(st.sampled_from(FIELDS_OK))])
    return Token(flag + [draw(TEXT_ODD)])


def semantic_invalid(prefix: tuple[str, ...], name: str, value: int) -> bool:
    """Values of common options that no command accepts (fixture codes have n <= 6)."""
    if prefix[0] == "design":
        return ((name == "n" and not 1 <= value <= MAX_N)
                or (name == "s" and value < 0)
                or (name == "k" and not 1 <= value <= MAX_COLUMNS)
                or (name == "seed" and value < 0))
    if prefix[0] in ("verify", "attack", "export") and name == "stragglers":
        return value < 0 or value > 6
    return False


@st.composite
def arg_cases(draw: st.DrawFn) -> Case:
    """Random argument lists for any command (and design scheme), valid or not."""
    leaves = leaf_commands()
    prefix, cmd = draw(st.sampled_from(leaves))
    params = [p for p in cmd.params if not getattr(p, "is_eager", False)]
    args: list[str] = list(prefix)
    invalid, outputs = False, []
    for p in params:
        bad = draw(st.integers(0, 5)) == 0
        tok = draw(param_tokens(tuple(prefix), p, bad))
        if tok is None:
            continue
        args += tok.args
        invalid |= tok.invalid
        outputs += tok.outputs
    extra = draw(st.sampled_from([None, None, None, "--no-such-option", "extra-arg", "-Z"]))
    if extra is not None:
        args.append(extra)
        invalid = True
    if prefix[0] == "design" and draw(st.integers(0, 9)) == 0:
        args[1] = draw(st.sampled_from(["nosuch", "FRC", "", "frc2"]))
        invalid = True
    return Case(args, "args:" + " ".join(prefix), stdin=_stdin_for(draw, args),
                must_fail=invalid, outputs=tuple(outputs))


def _stdin_for(draw: st.DrawFn, args: list[str]) -> bytes:
    if "-" not in args:
        return b""
    return draw(st.sampled_from([b"", code_bytes(CODES["frc"], False), b"{"]))


def file_commands() -> list[tuple[list[str], click.Command, click.Argument]]:
    """Commands with a positional input file (verify, attack, bound, export, show, ...)."""
    out = []
    for prefix, cmd in leaf_commands():
        arg = reads_code_file(cmd)
        if arg is not None:
            out.append((prefix, cmd, arg))
    return out


def base_args(draw: st.DrawFn, cmd: click.Command, skip: click.Parameter
              ) -> tuple[list[list[str]], list[str]]:
    """Valid values for the other required parameters (e.g. ``export -o``), as groups of
    tokens that stay together; and the output paths among them."""
    groups: list[list[str]] = []
    outputs: list[str] = []
    for p in cmd.params:
        if p is skip or not p.required:
            continue
        if isinstance(p, click.Argument):
            groups.append([draw(st.sampled_from(INPUTS))])
            continue
        tok = draw(param_tokens(("x",), p, False))
        if tok is not None:
            groups.append(tok.args)
            outputs += tok.outputs
    return groups, outputs


def _place(draw: st.DrawFn, prefix: list[str], target: str, groups: list[list[str]]
           ) -> list[str]:
    """The command line with ``target`` at a random place between the other groups."""
    where = draw(st.integers(0, len(groups)))
    ordered = groups[:where] + [[target]] + groups[where:]
    return list(prefix) + [tok for group in ordered for tok in group]


@st.composite
def file_cases(draw: st.DrawFn, prefix: list[str] | None = None, only: str | None = None
               ) -> Case:
    """A certainly broken input file (or path, or stdin) given to a file-reading command.

    ``prefix`` fixes the command; ``only`` fixes the category: ``json-<kind>``,
    ``npz-<kind>`` (see JSON_KINDS / NPZ_KINDS), one of BAD_INPUTS, or ``stdin``."""
    commands = [c for c in file_commands() if prefix is None or c[0] == prefix]
    prefix, cmd, arg = draw(st.sampled_from(commands))
    sources = ["json", "npz", "path", "stdin"]
    if only is not None:
        sources = [only.split("-")[0] if only.split("-")[0] in ("json", "npz") else
                   "stdin" if only == "stdin" else "path"]
    source = draw(st.sampled_from(sources))
    files: dict[str, bytes] = {}
    stdin = b""
    if source == "json":
        kind, data = draw(broken_json([only[5:]] if only else None))
        target, files = "broken.json", {"broken.json": data}
    elif source == "npz":
        kind, data = draw(broken_npz([only[4:]] if only else None))
        target, files = "broken.npz", {"broken.npz": data}
    elif source == "path":
        kind, target = "path", draw(st.sampled_from([only] if only else BAD_INPUTS))
    else:
        kind, target = "stdin", "-"
        stdin = draw(st.one_of(st.just(b""), st.just(b"  \n"), broken_json().map(lambda x: x[1]),
                               broken_npz().map(lambda x: x[1])))
    groups, outputs = base_args(draw, cmd, arg)
    return Case(_place(draw, prefix, target, groups), f"file:{source}:{kind}:{' '.join(prefix)}",
                stdin=stdin, files=files, must_fail=True, outputs=tuple(outputs))


@st.composite
def mutated_cases(draw: st.DrawFn) -> Case:
    """Byte-level mutations of valid files (the result may or may not be valid)."""
    prefix, cmd, arg = draw(st.sampled_from(file_commands()))
    name = draw(st.sampled_from(sorted(CODES)))
    npz = draw(st.booleans())
    data = draw(mutated(code_bytes(CODES[name], npz)))
    target = "mutated.npz" if npz else "mutated.json"
    groups, outputs = base_args(draw, cmd, arg)
    return Case(_place(draw, prefix, target, groups), f"mutated:{'npz' if npz else 'json'}",
                files={target: data}, outputs=tuple(outputs))






# -- help examples, run as they are or with one or two parameters changed ------------------------
REPO = Path(__file__).resolve().parents[1]
FILE_SUFFIXES = (".json", ".npz", ".txt", ".csv")


def examples(prefix: list[str], cmd: click.Command) -> list[list[str]]:
    """The command's documented examples as argv lists (segments of pipes and ``&&`` chains
    that run this command), with input files mapped to fixtures and outputs to ``out.*``."""
    lines: list[str] = []
    if prefix[0] == "design":
        from gctool.cli.design import examples as scheme_examples
        from gctool.registry import SCHEMES

        info = SCHEMES.get(prefix[1])
        lines = scheme_examples(info) if info is not None else []
    lines += [ln.strip() for ln in (cmd.epilog or "").splitlines()
              if ln.strip().startswith("gctool ")]
    out = []
    for line in lines:
        for segment in line.replace("&&", "|").split("|"):
            try:
                argv = shlex.split(segment, comments=True)
            except ValueError:
                continue
            mapped = _map_files(argv[1:], cmd)
            if argv[:1 + len(prefix)] == ["gctool", *prefix] and mapped not in out:
                out.append(mapped)
    return out


def _map_files(argv: list[str], cmd: click.Command) -> list[str]:
    outputs = {o for p in cmd.params if isinstance(p, click.Option) and is_output(p)
               for o in p.opts}
    mapped = []
    for i, tok in enumerate(argv):
        if i and argv[i - 1] in outputs and tok != "-":
            tok = "out" + Path(tok).suffix
        elif "/" in tok and (REPO / tok).resolve().parent.exists():
            tok = str((REPO / tok).resolve())  # e.g. a trace path
        elif tok.endswith(FILE_SUFFIXES) and not tok.startswith("-"):
            tok = "frc.npz" if tok.endswith(".npz") else "frc.json"
        mapped.append(tok)
    return mapped


def _drop_option(argv: list[str], p: click.Option) -> list[str]:
    names = set(p.opts) | set(p.secondary_opts)
    out, skip = [], False
    for tok in argv:
        if skip:
            skip = False
            continue
        if tok in names:
            skip = not (p.is_flag or p.count)
            continue
        if any(tok.startswith(n + "=") for n in names if n.startswith("--")):
            continue
        out.append(tok)
    return out


@st.composite
def example_cases(draw: st.DrawFn) -> Case:
    """A documented example, unchanged or with one or two parameters replaced by odd values."""
    choices = [(prefix, cmd, ex) for prefix, cmd in leaf_commands()
               for ex in examples(prefix, cmd)]
    prefix, cmd, argv = draw(st.sampled_from(choices))
    argv = list(argv)
    outputs = [argv[i] for i in range(1, len(argv)) if argv[i].startswith("out.")]
    invalid: dict[str, bool] = {}  # per option: the last value given decides
    options = [p for p in cmd.params if isinstance(p, click.Option) and not p.is_eager]
    for _ in range(draw(st.integers(0, 2))):
        if not options:
            break
        p = draw(st.sampled_from(options))
        tok = draw(param_tokens(tuple(prefix), p, draw(st.booleans())))
        argv = _drop_option(argv, p)
        if tok is not None:
            argv += tok.args
            outputs += tok.outputs
        invalid[p.name or ""] = tok.invalid if tok is not None else p.required
    return Case(argv, "example:" + " ".join(prefix), stdin=_stdin_for(draw, argv),
                must_fail=any(invalid.values()), outputs=tuple(outputs))


@st.composite
def all_cases(draw: st.DrawFn) -> Case:
    """The mix of the long run: 40% broken files, 25% documented examples (as they are or with
    changed parameters), 25% random arguments, 10% mutated valid files."""
    pick = draw(st.integers(0, 19))
    strategy = (file_cases() if pick < 8 else example_cases() if pick < 13
                else arg_cases() if pick < 18 else mutated_cases())
    return draw(strategy)
