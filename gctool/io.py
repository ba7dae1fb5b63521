"""Versioned code files (JSON and NPZ), atomic writes, and ``-`` for stdin/stdout.

Code file format, version 1 (see README "File formats" and ``gctool/schema/code-v1.schema.json``):

* JSON: one object with ``format = "gctool.code"``, ``version = 1``, ``scheme``, ``n``, ``k``,
  ``s``, ``field`` (``"real"``, ``"complex"``, ``"GF(7)"``, ``"GF(2^4)"``), ``irreducible_poly``
  (GF(p^m) with m > 1 only), ``params``, ``seed``, ``provenance`` and ``B`` (n rows; numbers for
  real, ``[re, im]`` pairs for complex, integers for GF(q)).  Reals are written with Python's
  shortest round-trip repr, so they survive a round trip bit for bit.
* NPZ: an array ``B`` (float64, complex128 or int64) and a 0-d unicode array ``meta`` holding the
  same JSON object without ``B``.  Pickles are never loaded (``allow_pickle=False``).
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import zipfile
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from gctool._files import (
    NpzFile,
    atomic_write,
    npz_members,
    npz_unpacked,
    open_input,
    read_bytes,
)
from gctool.algebra.fields import Field, parse_field
from gctool.algebra.polynomials import is_irreducible, parse_poly
from gctool.budget import (
    NS_PER_S,
    READ_FREE_NS,
    Budget,
    format_bytes,
    read_cost,
    read_sample,
    suggest_time,
)
from gctool.errors import CodeFileError, FieldError, InvalidInput, printable
from gctool.limits import MAX_FILE_BYTES, MAX_JSON_CONTAINERS, MAX_JSON_DEPTH, MAX_JSON_NUMBERS
from gctool.model import GradientCode
from gctool.params import validate as validate_params
from gctool.wording import noun

if TYPE_CHECKING:
    from hashlib import _Hash

__all__ = [
    "CODE_FORMAT", "CODE_VERSION", "MAX_FILE_BYTES", "atomic_write", "code_bytes",
    "code_from_bytes", "code_from_meta", "code_to_doc", "code_to_meta", "decode_matrix",
    "decode_text",
    "dumps_document", "encode_matrix", "is_irreducible", "is_npz_path", "loads_json",
    "load_code", "npz_bytes", "npz_member", "parse_list", "read_bytes",
    "read_code", "read_json_input", "read_list_input", "read_text_input",
    "write_code",
]

CODE_FORMAT = "gctool.code"
CODE_VERSION = 1
_REQUIRED = ("format", "version", "scheme", "n", "k", "s", "field", "B")
#: longest scheme name a file may give (it is a label shown on the terminal)
MAX_SCHEME_NAME = 200


# ---------------------------------------------------------------------------------------------
# code <-> document
# ---------------------------------------------------------------------------------------------
def encode_matrix(M: np.ndarray, field: Field) -> list[Any]:
    """Matrix -> JSON-ready nested lists (complex entries as [re, im] pairs)."""
    if field.kind == "complex":
        return np.stack([M.real, M.imag], axis=-1).tolist()
    if field.kind == "real":
        return np.asarray(M, dtype=np.float64).tolist()
    return np.asarray(M, dtype=np.int64).tolist()


def decode_matrix(rows: Any, field: Field, what: str = "B") -> np.ndarray:
    """JSON nested lists -> matrix in the field's dtype, with clear errors."""
    return field.coerce(_json_matrix(rows, field, what), what)


def _json_matrix(rows: Any, field: Field, what: str) -> np.ndarray:
    """JSON nested lists -> a numeric array (not yet in the field's dtype: ``Field.coerce``
    does that, in :class:`GradientCode` for a code's B), with clear errors."""
    if not isinstance(rows, list) or not rows or not all(isinstance(r, list) for r in rows):
        raise CodeFileError(f"{what} must be a non-empty list of rows")
    width = len(rows[0])
    if width == 0:
        raise CodeFileError(f"{what} has empty rows (every worker needs at least one column)")
    for i, row in enumerate(rows):
        if len(row) != width:
            raise CodeFileError(
                f"{what} is ragged: row {i} has {len(row)} entries, row 0 has {width}")
    for row in rows:  # row by row: no flat copy of a large matrix
        for x in (row if field.kind != "complex" else _pairs(row, what)):
            if isinstance(x, bool) or not isinstance(x, int | float):
                raise CodeFileError(f"{what} has a non-numeric entry {_short(x)}")
    try:
        arr = np.array(rows, dtype=np.float64 if field.kind != "gf" else None)
    except (OverflowError, ValueError) as exc:
        raise CodeFileError(f"{what} has entries that are not numbers of {field}: {exc}") from None
    if field.kind == "complex":
        out = np.empty(arr.shape[:-1], dtype=np.complex128)
        out.real, out.imag = arr[..., 0], arr[..., 1]  # keeps signed zeros
        arr = out
    elif field.kind == "gf" and arr.dtype == object:
        raise CodeFileError(f"{what} has entries outside {field} (integers too large)")
    return arr


def _pairs(row: list[Any], what: str) -> list[Any]:
    out: list[Any] = []
    for x in row:
        if not (isinstance(x, list) and len(x) == 2):
            raise CodeFileError(f"{what}: complex entries must be [re, im] pairs, got {_short(x)}")
        out.extend(x)
    return out


def _short(value: Any, limit: int = 60) -> str:
    """``repr`` cut to ``limit`` characters, so that error messages stay one short line."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def code_to_meta(code: GradientCode) -> dict[str, Any]:
    """The code document without ``B`` (the NPZ ``meta`` object)."""
    field = code.field.resolved()
    meta: dict[str, Any] = {
        "format": CODE_FORMAT,
        "version": CODE_VERSION,
        "scheme": code.scheme,
        "n": code.n,
        "k": code.k,
        "s": code.s,
        "field": str(field),
    }
    if field.poly is not None:
        meta["irreducible_poly"] = field.poly_str
    meta["params"] = dict(code.params)
    meta["seed"] = code.seed
    meta["provenance"] = dict(code.provenance)
    if code.order is not None:
        from gctool.order import order_to_json

        meta["order"] = order_to_json(code.order)
    return meta


def code_to_doc(code: GradientCode) -> dict[str, Any]:
    doc = code_to_meta(code)
    doc["B"] = encode_matrix(code.B, code.field)
    return doc


def _field_from_meta(meta: Mapping[str, Any]) -> Field:
    if not isinstance(meta["field"], str):
        raise CodeFileError("'field' must be a string such as \"real\" or \"GF(7)\"")
    field = parse_field(meta["field"])
    poly = meta.get("irreducible_poly")
    if poly is not None:
        if field.kind != "gf" or field.m == 1:
            raise CodeFileError(f"'irreducible_poly' is only allowed for GF(p^m), not {field}")
        value = parse_poly(str(poly), field.p, field.m)
        if field.poly is not None and field.poly != value:
            raise CodeFileError("'irreducible_poly' disagrees with the polynomial in 'field'")
        field = Field("gf", field.p, field.m, value)
    return field


def _int_key(meta: Mapping[str, Any], key: str) -> int:
    value = meta[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise CodeFileError(f"{key!r} must be an integer, got {_short(value)}")
    return value


def code_from_meta(meta: Any, B: Any) -> GradientCode:
    """Build a code from a document (``meta`` without B, plus ``B``), validating everything."""
    if not isinstance(meta, dict):
        raise CodeFileError("a code file must hold one JSON object")
    if "format" not in meta:
        raise CodeFileError(f"not a gctool code file: the key 'format' is missing (a code file "
                            f"has \"format\": {CODE_FORMAT!r})")
    if not isinstance(meta.get("format"), str) or meta.get("format") != CODE_FORMAT:
        raise CodeFileError(f"not a gctool code file: 'format' is {_short(meta.get('format'))}, "
                            f"expected {CODE_FORMAT!r}")
    version = meta.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version != CODE_VERSION:
        raise CodeFileError(f"unsupported code file version {_short(meta.get('version'))} "
                            f"(this gctool reads version {CODE_VERSION})")
    missing = [key for key in _REQUIRED if key not in meta and not (key == "B" and B is not None)]
    if missing:
        raise CodeFileError(f"code file is missing {noun(len(missing), 'key')}: "
                            f"{', '.join(missing)}")
    field = _field_from_meta(meta)
    n, k, s = (_int_key(meta, key) for key in ("n", "k", "s"))
    scheme = meta["scheme"]
    if not isinstance(scheme, str) or not 0 < len(scheme) <= MAX_SCHEME_NAME:
        raise CodeFileError(f"'scheme' must be a string of 1..{MAX_SCHEME_NAME} characters")
    if not scheme.isprintable():
        raise CodeFileError(f"'scheme' \"{printable(scheme, 80)}\" holds control characters")
    params, seed = meta.get("params", {}), meta.get("seed")
    provenance = meta.get("provenance", {})
    if not isinstance(params, dict) or not isinstance(provenance, dict):
        raise CodeFileError("'params' and 'provenance' must be JSON objects")
    validate_params(scheme, params, n, k)
    # B as parsed (JSON) or loaded (NPZ): the model converts it to the field, once, and
    # checks its shape against the recorded n and k
    matrix = _json_matrix(B, field, "B") if isinstance(B, list) else B
    try:
        return GradientCode(matrix, field, s, meta["scheme"], params, seed, provenance,
                            meta.get("order"), recorded=(n, k))
    except FieldError:
        raise
    except InvalidInput as exc:
        raise CodeFileError(str(exc)) from None


# ---------------------------------------------------------------------------------------------
# JSON text
# ---------------------------------------------------------------------------------------------
def _reject_constant(name: str) -> NoReturn:
    raise CodeFileError(f"invalid JSON: {name} is not allowed (entries must be finite)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object without repeated keys: ``{"scheme": "a", "scheme": "b"}`` would be read as one
    scheme by one program and as the other by the next, so it is refused."""
    doc = dict(pairs)
    if len(doc) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise CodeFileError(f"invalid JSON: duplicate key {_short(key)}")
            seen.add(key)
    return doc


#: a JSON escape of a UTF-16 surrogate (only escapes can produce a lone one)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _check_surrogates(value: Any) -> None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise CodeFileError("invalid JSON: a string holds a lone UTF-16 surrogate "
                                    f"({_short(item)})") from None
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(x for x in item if isinstance(x, str | list | dict))


_TOO_DEEP = f"invalid JSON (arrays and objects nested deeper than {MAX_JSON_DEPTH} levels)"


def _check_document(doc: Any) -> None:
    """Refuse arrays and objects nested deeper than :data:`~gctool.limits.MAX_JSON_DEPTH` and
    floats beyond float64's range (``1e400``, which JSON readers turn into infinity).  Level by
    level, holding only the containers; the items of each one are classified and searched in C
    (``map(type, ...)``, ``in``)."""
    level, depth = [doc], 0
    while level:
        depth += 1
        if depth > MAX_JSON_DEPTH:
            raise CodeFileError(_TOO_DEEP)
        nested: list[Any] = []
        for item in level:
            items = item.values() if type(item) is dict else item
            kinds = set(map(type, items))
            if float in kinds and (_INF in items or -_INF in items):
                raise CodeFileError("invalid JSON: a number is beyond float64's range (above "
                                    "1.8e308 in magnitude)")
            if list in kinds or dict in kinds:
                nested.extend(x for x in items if type(x) is list or type(x) is dict)
        level = nested


_INF = float("inf")


def loads_json(text: str, source: str) -> Any:
    """Parse JSON input with clear errors; refuses NaN/Infinity, repeated keys, lone
    surrogates, nesting deeper than :data:`~gctool.limits.MAX_JSON_DEPTH` and oversize
    documents.

    The counts of numbers (every number but the last of an array is followed by a comma) and
    of arrays and objects (each opens with a bracket) are bounded *before* parsing, so that a
    huge file fails fast instead of filling memory.
    """
    if text.count(",") > MAX_JSON_NUMBERS + 4096:
        raise CodeFileError(f"{source}: too many values for a JSON file (limit "
                            f"{MAX_JSON_NUMBERS:,} numbers); use an NPZ file for large codes")
    if text.count("[") + text.count("{") > MAX_JSON_CONTAINERS:
        raise CodeFileError(f"{source}: too many arrays and objects for a JSON file (limit "
                            f"{MAX_JSON_CONTAINERS:,}; a complex entry is one); use an NPZ "
                            "file for large codes")
    try:
        doc = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
        if isinstance(doc, float) and abs(doc) == _INF:
            _check_document([doc])
        if isinstance(doc, list | dict):
            _check_document(doc)
        if _SURROGATE_ESCAPE.search(text):
            _check_surrogates(doc)
        return doc
    except CodeFileError as exc:
        raise CodeFileError(f"{source}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise CodeFileError(f"{source}: invalid JSON ({exc.msg} at line {exc.lineno}, "
                            f"column {exc.colno})") from None
    except RecursionError:
        raise CodeFileError(f"{source}: {_TOO_DEEP}") from None
    except ValueError as exc:  # e.g. an integer with more than 4300 digits
        text = " ".join(str(exc).split())
        if "integer string conversion" in text:
            text = f"an integer has more than {sys.get_int_max_str_digits()} digits"
        raise CodeFileError(f"{source}: invalid JSON ({text[:100]})") from None


def read_json_input(path: str | os.PathLike[str], what: str) -> Any:
    """The parsed JSON document of an input file other than a code file (``weights``,
    ``p_file``, a curve file, a checkpoint): the same size cap, errors and refusals as code
    files (:func:`read_text_input`, :func:`loads_json`)."""
    text, label = read_text_input(path, what)
    return loads_json(text, label)


#: a word of an option value: letters, digits, ``_`` and ``.``, with the sign of an exponent
#: (``1e-9``); the numbers inside ``"1,2,3"``, ``"GF(7^2)"``, ``"rate=3"`` are words
_WORD = re.compile(r"(?:[\w.]|(?<=[eE])[+-])+")
#: the number a word starts with (any decimal digits: ``\d`` is Unicode-aware here)
_NUMBER = re.compile(r"[+-]?(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?")


def _ascii_digits(text: str) -> str:
    return "".join(str(int(c)) if c.isdecimal() and not c.isascii() else c for c in text)


def unicode_number(value: str) -> str | None:
    """``value`` with its non-ASCII decimal digits made ASCII, when one of the numbers in it is
    written with them (``'٣'``, ``'１０'``, ``'GF(٧)'``, ``'0,٤'``, ``'١e-9'``); None otherwise.
    Python's ``int``/``float`` and ``\\d`` accept such digits, which a reader of the command
    line (or of a CI log) cannot tell from others, so gctool reads numbers in ASCII only.  A
    word that contains such a digit but does not start with a number (a file name
    ``run٣.csv``) passes."""
    if value.isascii():
        return None
    for word in _WORD.findall(value):
        number = _NUMBER.match(word)  # a word that starts with a number ("3", "1.5e-9", "30s")
        if number is not None and not number.group().isascii():
            return _ascii_digits(value)
    return None


def parse_list(text: str, label: str, what: str) -> list[Any]:
    """The one reader of list-valued options and option files (``p_file``, ``worker_p``,
    ``weights``, ``profile``, ``profile_file``, ``level_counts``): a JSON document
    (text starting with ``[`` or ``{``, read by :func:`loads_json`: duplicate keys, NaN,
    lone surrogates and deep nesting refused) that must be a list, or items separated by
    commas, spaces, semicolons or newlines (``#`` starts a comment), returned as strings."""
    body = text.strip()
    if body.startswith(("[", "{")):
        values = loads_json(body, label)
        if not isinstance(values, list):
            raise CodeFileError(f"{label}: expected {what} as a JSON list, got a JSON "
                                f"{'object' if isinstance(values, dict) else 'value'}")
        return values
    body = "\n".join(line.split("#", 1)[0] for line in body.splitlines())
    tokens = [tok for tok in re.split(r"[\s,;]+", body) if tok]
    for tok in tokens:
        fixed = unicode_number(tok)
        if fixed is not None:
            raise CodeFileError(f"{label}: {_short(tok)} writes a number in non-ASCII digits; "
                                f"gctool reads ASCII digits only (did you mean {fixed!r}?)")
    return tokens


def read_list_input(path: str | os.PathLike[str], what: str) -> tuple[list[Any], str]:
    """(list, label) of an option file (``-`` = stdin): :func:`read_text_input` (size cap,
    devices, UTF-8) and :func:`parse_list`."""
    text, label = read_text_input(path, what)
    return parse_list(text, label, what), label


def read_text_input(path: str | os.PathLike[str], what: str) -> tuple[str, str]:
    """(text, label) of a UTF-8 input file (``-`` = stdin), read with the size cap of
    :func:`gctool._files.read_bytes` (devices, FIFOs and huge files stop at the limit)."""
    data, label = read_bytes(path, what)
    return decode_text(data, label, what), label


def dumps_document(doc: Mapping[str, Any]) -> str:
    """Deterministic JSON: one top-level key per line, matrices one row per line."""
    lines = []
    for key, value in doc.items():
        name = json.dumps(key)
        if isinstance(value, list) and value and all(isinstance(r, list) for r in value):
            rows = ",\n".join("    " + _compact(r) for r in value)
            lines.append(f"  {name}: [\n{rows}\n  ]")
        else:
            lines.append(f"  {name}: {_compact(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(", ", ": "), sort_keys=True, allow_nan=False)


# ---------------------------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------------------------
def read_code(path: str | os.PathLike[str], budget: Budget | None = None) -> GradientCode:
    """Read a code file (JSON or NPZ, detected from its content; ``-`` = stdin); with
    ``budget``, held to it (:func:`load_code`)."""
    if budget is not None:
        return load_code(path, budget)[0]
    with open_input(path) as (data, label):
        return code_from_bytes(data, label)


#: the first bytes of a zip archive (an NPZ file)
ZIP_MAGIC = b"PK\x03\x04"


def load_code(path: str | os.PathLike[str], budget: Budget, digest: _Hash | None = None
              ) -> tuple[GradientCode, Budget]:
    """Read a code file within ``budget``: (the code, what reading it leaves of ``budget`` to
    the rest of the run, :meth:`~gctool.budget.Budget.rest`).

    Reading is estimated from the file's size and kind (JSON or NPZ, and a JSON file's sample,
    :func:`~gctool.budget.read_cost`) and refused above ``max_work`` before anything is read:
    a regular JSON file from its size on disk and pieces of it, an NPZ file from its zip
    directory (read once: the read then reads the members with it), stdin, a FIFO or a
    device (whose size is known once read) before the bytes are parsed.  Below
    :data:`~gctool.budget.READ_FREE_NS` it is read under any budget and leaves all of it.  A
    file above the size limit is left to :func:`read_bytes`, whose refusal says so.
    ``digest``: ``update``d with the file's bytes as they are read, in order, all of them
    (:func:`gctool._files.open_input`; ``design kron``'s SHA-256 of a factor's file, which
    is read once: it may be stdin or a FIFO)."""
    peeked = _peek(path)
    if peeked is not None:
        _check_read(budget, str(path), *peeked)
    with open_input(path, digest=digest) as (data, label):  # an NPZ file: read member-wise
        if peeked is None:
            peeked = _measure(data)
            _check_read(budget, label, *peeked)
        code = code_from_bytes(data, label)
    work = read_cost(*peeked)
    return code, budget.rest(work if work >= READ_FREE_NS else 0.0)


#: what :func:`~gctool.budget.read_cost` estimates a read from: (NPZ?, bytes, a JSON file's
#: sample, the bytes an NPZ file unpacks and the bytes they are packed in)
Peeked = tuple[bool, int, bytes, int, int]


def _peek(path: str | os.PathLike[str]) -> Peeked | None:
    """What a regular JSON file's read is estimated from, from its status, its first bytes
    and its sample (:func:`~gctool.budget.read_sample`); None for an NPZ file (estimated
    once open, by :func:`_measure`, from the zip directory that its read then reads the
    members with), for stdin, FIFOs and devices (opening a FIFO would wait for a writer) and
    for a path that cannot be read (:func:`read_bytes` says why)."""
    import stat

    if str(path) == "-":
        return None
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if fh.read(4) == ZIP_MAGIC:
                return None  # open_input reads no member before _measure's estimate

            def read_at(at: int, count: int) -> bytes:
                fh.seek(at)
                return fh.read(count)
            return False, size, read_sample(read_at, size), 0, 0
    except (OSError, ValueError):
        return None


def _measure(data: bytes | memoryview | NpzFile) -> Peeked:
    """What the read of an NPZ file (of which nothing but its zip directory is read) or of
    an input whose size is known once it is read (stdin, a FIFO, a device) is estimated
    from, as :func:`_peek` finds it of a regular JSON file."""
    if isinstance(data, NpzFile):
        return True, data.size, b"", *npz_unpacked(data, data.size)
    if data[:4] == ZIP_MAGIC:
        return True, len(data), b"", *npz_unpacked(data, len(data))
    return False, len(data), read_sample(lambda at, count: bytes(data[at:at + count]),
                                         len(data)), 0, 0


def _check_read(budget: Budget, label: str, npz: bool, size: int, sample: bytes,
                unpacked: int, packed: int) -> None:
    """Refuse reading ``size`` bytes of JSON or NPZ (that unpacks ``unpacked`` bytes from
    ``packed``) above ``budget`` (one line)."""
    work = read_cost(npz, size, sample, unpacked, packed)
    if work < READ_FREE_NS or size > MAX_FILE_BYTES:  # (read_bytes refuses the latter)
        return
    kind = "NPZ" if npz else "JSON"
    if unpacked:
        kind = f"compressed NPZ, {format_bytes(unpacked)} unpacked"
    remedy = f"raise `max_work` to {suggest_time(work / NS_PER_S)}"
    if not npz:
        remedy += " (the same code in an NPZ file reads 25-120x faster)"
    budget.check_work(f"reading {label} ({format_bytes(size)} of {kind})", work, remedy)


def code_from_bytes(data: bytes | memoryview | NpzFile, label: str) -> GradientCode:
    """The code of a code file's bytes (JSON or NPZ, detected from the content), or of an NPZ
    file being read (:func:`gctool._files.open_input`), read from ``label``."""
    try:
        if isinstance(data, NpzFile) or data[:4] == ZIP_MAGIC:
            return _read_npz(data, label)
        text = decode_text(data, label)
        del data  # the text and the parsed document are enough (bounded memory)
        doc = loads_json(text, label)
        if not isinstance(doc, dict):
            raise CodeFileError(f"{label}: a code file must hold one JSON object")
        return code_from_meta(doc, doc.get("B"))
    except InvalidInput as exc:  # field, model and file errors all name the file
        msg = str(exc)
        raise CodeFileError(msg if msg.startswith(label) else f"{label}: {msg}") from None


def decode_text(data: bytes | memoryview, label: str, what: str = "a JSON or NPZ code file"
                ) -> str:
    """UTF-8 text of an input that should be JSON, with a clear error otherwise."""
    if data[:4] == b"PK\x03\x04":
        raise CodeFileError(f"{label}: expected {what}, got a zip/NPZ file")
    try:
        return str(data, "utf-8-sig")  # a byte order mark (Windows editors) is allowed
    except UnicodeDecodeError:
        raise CodeFileError(f"{label}: not {what} (not UTF-8 text)") from None


def _read_npz(data: bytes | memoryview | NpzFile, label: str) -> GradientCode:
    arrays = npz_members(data, ("B", "meta"), {"meta": 1})
    B, meta = arrays["B"], arrays["meta"]
    if meta.ndim != 0 or meta.dtype.kind != "U":
        raise CodeFileError("NPZ 'meta' must be a 0-d string array holding a JSON object")
    if B.dtype.kind not in "fciub":
        raise CodeFileError(f"NPZ 'B' has unsupported dtype {B.dtype}")
    doc = loads_json(str(meta[()]), label + " meta")
    if isinstance(doc, dict) and "B" in doc:
        raise CodeFileError("NPZ 'meta' must not contain 'B'")
    return code_from_meta(doc, B)


# ---------------------------------------------------------------------------------------------
# writing (atomic_write lives in gctool._files and is re-exported here)
# ---------------------------------------------------------------------------------------------
def is_npz_path(path: str | os.PathLike[str]) -> bool:
    return str(path) != "-" and str(path).lower().endswith(".npz")


def npz_member(name: str) -> zipfile.ZipInfo:
    """The zip entry (a ``zipfile.ZipInfo``) of one NPZ member: stored, fixed timestamp, mode
    0644, so that identical arrays give identical bytes (:func:`npz_bytes` and the streamed
    decoding table of :mod:`gctool.decoding_table`)."""
    import zipfile

    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.external_attr = 0o644 << 16
    info.compress_type = zipfile.ZIP_STORED
    return info


def npz_bytes(arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> bytes:
    """Serialise arrays plus a JSON ``meta`` into NPZ bytes (deterministic, no pickles).

    Each ``NAME.npy`` member is written by numpy's own ``write_array`` (what ``np.savez`` does)
    into a stored zip entry with a fixed timestamp, so identical inputs give identical bytes;
    one member at a time, streamed into the archive: no copy of a member, nor of the archive
    (bounded memory; each copy of a 134 MB B cost 0.1-1 s of fresh memory on the development
    machine, :data:`~gctool.budget.WRITE_PROBE_FROM`)."""
    import zipfile

    payload = dict(arrays)
    payload["meta"] = np.array(json.dumps(meta, sort_keys=True, allow_nan=False))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as dst:
        for name, arr in payload.items():
            if arr.dtype == object:
                raise ValueError(f"refusing to write object array {name!r}")
            # a member of the archive in memory, not a file; zip64 as writestr decides it,
            # from the member's size (the same bytes)
            with dst.open(npz_member(name + ".npy"),
                          mode="w", force_zip64=arr.nbytes * 1.05 > zipfile.ZIP64_LIMIT
                          ) as member:
                np.lib.format.write_array(member, np.asanyarray(arr), allow_pickle=False)
    return out.getvalue()


def code_bytes(code: GradientCode, npz: bool) -> bytes:
    """The bytes of a code file: NPZ, or JSON exactly as ``dumps_document(code_to_doc(code))``
    but encoded one row at a time (no Python list of the whole matrix: bounded memory)."""
    if npz:
        return npz_bytes({"B": np.asarray(code.B)}, code_to_meta(code))
    head = dumps_document(code_to_meta(code))
    out = io.BytesIO()
    out.write(head[: -len("\n}\n")].encode("utf-8"))
    out.write(b',\n  "B": [\n')
    for i, row in enumerate(code.B):
        if i:
            out.write(b",\n")
        out.write(("    " + _compact(encode_matrix(row[None, :], code.field)[0])).encode())
    out.write(b"\n  ]\n}\n")
    return out.getvalue()


def write_code(code: GradientCode, path: str | os.PathLike[str]) -> None:
    """Write a code file; the format follows the extension (``.npz``, otherwise JSON)."""
    atomic_write(path, code_bytes(code, is_npz_path(path)))
