"""Hardened file plumbing shared by every command: bounded reads, safe NPZ members, atomic writes.

* :func:`read_bytes` reads a whole input (``-`` = stdin) but never more than
  :data:`~gctool.limits.MAX_FILE_BYTES` (+1 byte to detect the excess), also from devices and
  FIFOs whose size is unknown, and turns every OS error into one clear :class:`CodeFileError`.
* :func:`open_input` opens a code file for reading: an NPZ regular file is read member by
  member from the file (never held whole), hashing its bytes in order when asked; any other
  input is read whole, as :func:`read_input` reads it.
* :func:`npz_members` reads arrays from NPZ bytes or an open NPZ file after checking each
  member's uncompressed size and ``.npy`` header (dtype, shape, entry count) *before*
  allocating anything; object arrays (pickles) are refused.
* :func:`atomic_write` writes a temporary file in the target's directory, fsyncs it and renames
  it over the target, so an existing file is either fully replaced or left exactly as it was.
* :func:`atomic_stream` does the same for output produced piece by piece (``export decoders``
  to NPZ): it yields a binary stream on the temporary file and renames it only when the block
  ends normally; on any error or Ctrl-C the temporary file is removed (no partial file).
* :func:`probe_write` writes and removes a temporary file as :func:`atomic_write` would, for
  :func:`gctool.budget.write_rate` to time how fast this machine writes a large file there.

Overwrite policy (documented in docs/hardening.md, "Files"): an existing output file is replaced
without asking, atomically; a symlink is followed (its target is replaced, the link kept); the
mode of a replaced file is kept; a file the user may not write is refused; devices and FIFOs
(``/dev/null``) are written in place, since they cannot be renamed over.
"""

from __future__ import annotations

import functools
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from math import prod
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from gctool.errors import CodeFileError, InvalidInput

if TYPE_CHECKING:
    import io
    import zipfile
    from hashlib import _Hash

    import numpy as np
from gctool.limits import (
    MAX_ENTRIES,
    MAX_FILE_BYTES,
    MAX_NPY_HEADER_BYTES,
    MAX_NPZ_MEMBER_BYTES,
)

_MIB = 1 << 20
#: bytes written per system call (so a failing disk is detected midway, not only at the end)
WRITE_CHUNK = 1 << 20


# ---------------------------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------------------------
def read_bytes(path: str | os.PathLike[str], what: str = "a gctool code file"
               ) -> tuple[bytes, str]:
    """Read a whole input (``-`` = stdin) with size and type checks; return (data, label)."""
    data, label = _read_input(path, what, None)
    assert isinstance(data, bytes)
    return data, label


def read_input(path: str | os.PathLike[str], what: str = "a gctool code file",
               member: str = "B") -> tuple[bytes | memoryview, str]:
    """:func:`read_bytes`, except that an NPZ from a pipe is read into one growing mapping, as
    a read-only ``memoryview`` in which the array data of ``member`` starts at a 64-byte
    aligned address when it is the first member and stored (:func:`_read_streamed`).  A code
    file is read with :func:`open_input`, which does not read a regular NPZ file whole."""
    return _read_input(path, what, member + ".npy")


@contextmanager
def open_input(path: str | os.PathLike[str], what: str = "a gctool code file",
               member: str = "B", digest: _Hash | None = None
               ) -> Iterator[tuple[bytes | memoryview | NpzFile, str]]:
    """(source, label) of an input (``-`` = stdin) for the block: an NPZ regular file (named,
    or redirected to stdin) as an :class:`NpzFile`, whose members :func:`npz_members` reads
    from the file itself while the block runs (the file's bytes are never held whole: held
    beside an unpacked B of 134 MB, compressed to 129, they would make the process peak 264
    MB higher, not 134); any other input as :func:`read_input` returns it.  ``digest``: ``update``d
    with all of the input's bytes, in order, by the block's normal end (``design kron``'s
    SHA-256 of a factor's file: an NPZ file's bytes are hashed as they are read, what was not
    read, such as its zip directory, at the end)."""
    aligned = member + ".npy"
    if str(path) == "-":
        stream = getattr(sys.stdin, "buffer", None)
        rest = _regular_rest(stream) if stream is not None else 0
        if stream is not None and 0 < rest <= MAX_FILE_BYTES:
            with _npz_file(stream, rest, "stdin", digest) as npz:
                if npz is not None:
                    yield npz, "stdin"
                    return
        data, label = _read_input(path, what, aligned)
    else:
        label = str(path)
        fh, size = _open(path, label, what)  # once: a FIFO cannot be opened again
        with fh:
            with _npz_file(fh, size, label, digest) as npz:
                if npz is not None:
                    yield npz, label
                    return
            try:
                data = _read_capped(fh, size, aligned)  # devices, FIFOs: stop at the limit
            except OSError as exc:
                raise CodeFileError(f"{label}: cannot read ({exc.strerror or exc})") from None
        data = _checked(data, label, what)
    if digest is not None:
        digest.update(data)
    yield data, label


class NpzFile:
    """An NPZ regular file being read (:func:`open_input`): the ``size`` bytes of ``fh`` from
    where it stood, as a seekable file (:attr:`file`) that hashes what is read of it in order
    into ``digest``; its zip directory is read once (:meth:`directory`), for the read's
    estimate (:func:`npz_unpacked`) and the read (:func:`npz_members`) alike."""

    def __init__(self, fh: IO[bytes], size: int, digest: _Hash | None) -> None:
        self.size = size
        self.file = _Window(fh, fh.tell(), size, digest)
        self._directory: zipfile.ZipFile | Exception | None = None  # or the error it raised

    def directory(self) -> zipfile.ZipFile:
        """The file's zip directory, a ``zipfile.ZipFile`` on :attr:`file`, read on the first
        call; every call raises what reading it raised (each caller reports it in its words:
        the estimate as nothing to count, the read as a malformed NPZ)."""
        if self._directory is None:
            from zipfile import ZipFile

            try:
                self._directory = ZipFile(self.file)
            except Exception as exc:  # noqa: BLE001 (kept: raised to every caller)
                self._directory = exc
        if isinstance(self._directory, Exception):
            raise self._directory
        return self._directory


@contextmanager
def _npz_file(fh: IO[bytes], size: int, label: str, digest: _Hash | None
              ) -> Iterator[NpzFile | None]:
    """An :class:`NpzFile` on the regular file ``fh`` of ``size`` bytes from where it stands
    when they start as a zip file does (None, ``fh`` where it was, otherwise); on the block's
    normal end, ``digest`` is given the bytes that were not read."""
    if not size:
        yield None
        return
    try:
        start = fh.tell()
        head = fh.read(4)
        fh.seek(start)
    except OSError as exc:
        raise CodeFileError(f"{label}: cannot read ({exc.strerror or exc})") from None
    if head != b"PK\x03\x04":
        yield None
        return
    npz = NpzFile(fh, size, digest)
    yield npz
    try:
        whole = npz.file.hash_rest()
    except OSError as exc:
        raise CodeFileError(f"{label}: cannot read ({exc.strerror or exc})") from None
    if not whole:
        raise CodeFileError(f"{label}: the file shrank while it was read")


def _read_input(path: str | os.PathLike[str], what: str, aligned: str | None
                ) -> tuple[bytes | memoryview, str]:
    data: bytes | memoryview
    if str(path) == "-":
        label = "stdin"
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:
            raise CodeFileError("stdin: not available")
        try:
            data = _read_capped(stream, _regular_rest(stream), aligned)
        except OSError as exc:
            raise CodeFileError(f"stdin: cannot read ({exc.strerror or exc})") from None
    else:
        label = str(path)
        with _opened(path, label, what) as (fh, size):
            data = _read_capped(fh, size, aligned)  # devices and FIFOs: stop at the limit
    return _checked(data, label, what), label


def _checked(data: bytes | memoryview, label: str, what: str) -> bytes | memoryview:
    """``data``, a whole input, unless it is over the size limit or empty (one line)."""
    if len(data) > MAX_FILE_BYTES:
        raise CodeFileError(f"{label}: input is larger than {MAX_FILE_BYTES // _MIB} MiB")
    if not data or (isinstance(data, bytes) and data.isspace()):  # a view: an NPZ's bytes
        raise CodeFileError(f"{label}: empty input, expected {what}")
    return data


def _regular_rest(stream: IO[bytes]) -> int:
    """The bytes left in ``stream`` when it is a regular file (stdin redirected from one,
    ``gctool verify - < code.npz``), read then in one piece as a file named on the command line
    (in growing pieces, a 134 MB NPZ grew the process by 164 MB, not 133, and took 1.5x the
    time); 0 for a pipe, a terminal or a device (or an unseekable or unknown stream)."""
    try:
        info = os.fstat(stream.fileno())
        if not stat.S_ISREG(info.st_mode):
            return 0
        return max(0, info.st_size - stream.tell())
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is an OSError
        return 0


#: first piece read from an input of unknown size (a pipe, a device); each next piece doubles
READ_CHUNK = 1 << 16


def _read_capped(fh: IO[bytes], size: int = 0, aligned: str | None = None
                 ) -> bytes | memoryview:
    """At most :data:`MAX_FILE_BYTES` + 1 bytes of ``fh``, read in growing pieces: memory grows
    with what arrives, so a small input from a pipe never reserves the whole cap (``read(n)``
    allocates n bytes before it reads).  ``size``: the expected size (a regular file);
    ``aligned``: the zip member whose array an NPZ from a pipe is read to align
    (:func:`_read_streamed`)."""
    import io

    chunk = min(max(size + 1, READ_CHUNK), MAX_FILE_BYTES + 1)
    first = fh.read(chunk)
    if len(first) < chunk:  # the whole input (read(n) returns less only at the end)
        return first
    if aligned and not size and first[:4] == b"PK\x03\x04":  # an NPZ from a pipe
        streamed = _read_streamed(fh, first, aligned)
        if streamed is not None:
            return streamed
    out = io.BytesIO()  # getvalue() hands its buffer over without a copy
    out.write(first)
    del first
    while out.tell() <= MAX_FILE_BYTES:
        piece = fh.read(min(chunk, MAX_FILE_BYTES + 1 - out.tell()))
        if not piece:
            break
        out.write(piece)
        chunk = min(chunk * 2, WRITE_CHUNK * 16)
    return out.getvalue()


#: the address alignment of the array data of an NPZ read by :func:`read_input` (a cache line,
#: numpy's own alignment of the data in a ``.npy`` file; enough for every dtype)
DATA_ALIGN = 64


@functools.cache
def _read_buffer() -> type:
    """The type of the buffers :func:`read_input` fills (a ``numpy.ndarray`` subclass, defined
    when first needed: numpy is imported only then)."""
    import numpy as np

    class ReadBuffer(np.ndarray):
        """The bytes of a file read by :func:`read_input`: made read-only once filled, and
        never handed out but as a read-only ``memoryview``, so as immutable as ``bytes``
        (which :meth:`gctool.algebra.fields.Field.coerce` may keep a view of, uncopied)."""

        gctool_immutable = True

    return ReadBuffer


def _stored_data_start(read_at: Callable[[int, int], bytes], at: int, member: str
                       ) -> int | None:
    """Where the array data begins of the ``.npy`` member ``member`` stored (not compressed)
    under the zip local header at ``at`` (``read_at(pos, n)``: the n bytes from pos); None
    when that header is not of such a member, or its ``.npy`` header is not there."""
    local = read_at(at, 30)
    if len(local) < 30 or local[:4] != b"PK\x03\x04" or local[8:10] != b"\x00\x00":
        return None
    named = int.from_bytes(local[26:28], "little")
    if read_at(at + 30, named) != member.encode():
        return None
    at += 30 + named + int.from_bytes(local[28:30], "little")
    head = read_at(at, 12)
    if len(head) < 12 or head[:6] != b"\x93NUMPY":
        return None
    if head[6] == 1:
        return at + 10 + int.from_bytes(head[8:10], "little")
    return at + 12 + int.from_bytes(head[8:12], "little")


def _read_streamed(fh: IO[bytes], first: bytes, member: str) -> memoryview | None:
    """An NPZ from a stream of unknown size (a pipe) whose first bytes ``first`` have been
    read: the rest read straight into a private anonymous mapping that grows by doubling
    (``mremap``: its pages move, they are not copied), shifted so that the array data of
    ``member`` starts at a :data:`DATA_ALIGN` aligned address when it is the first member
    and stored (as gctool writes B); a read-only view of at most :data:`MAX_FILE_BYTES` + 1
    bytes, as :func:`_read_placed` gives a regular file's.  Read in growing pieces through
    ``io.BytesIO``, a 134 MB NPZ took 0.13-0.14 s of CPU and grew the process by 1.2x its
    size, and B was where the bytes happened to be (19 mod 64).  None, nothing read, where
    ``mmap`` cannot (no private mappings, no ``mremap``)."""
    import mmap

    import numpy as np

    private = getattr(mmap, "MAP_PRIVATE", None)
    if private is None:
        return None
    start = _stored_data_start(lambda pos, n: first[pos:pos + n], 0, member)
    shift = -start % DATA_ALIGN if start is not None else 0  # (a mapping is page aligned)
    cap = MAX_FILE_BYTES + 1
    room = shift + min(cap, max(4 * len(first), 1 << 20))
    try:
        raw = mmap.mmap(-1, room, flags=private)
        raw.resize(room)  # mremap there (not on every system)
    except (OSError, SystemError, ValueError):
        return None
    raw[shift:shift + len(first)] = first
    got = len(first)
    while got < cap:
        if shift + got == len(raw):
            raw.resize(shift + min(cap, 2 * got))
        with memoryview(raw) as whole:
            part = whole[shift + got:]
            n = cast("io.BufferedReader", fh).readinto(part)
            part.release()
        if not n:
            break
        got += n
    raw.resize(shift + got)  # the room not read to is returned
    buf: np.ndarray = np.frombuffer(raw, dtype=np.uint8).view(_read_buffer())
    buf.flags.writeable = False
    return buf.data[shift:shift + got]


class _ViewFile:
    """A read-only view of bytes as a seekable file, without a copy (``io.BytesIO`` copies
    anything but ``bytes``)."""

    def __init__(self, view: memoryview) -> None:
        self._view, self._pos = view, 0

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, pos: int, whence: int = 0) -> int:
        self._pos = max(0, (0, self._pos, len(self._view))[whence] + pos)
        return self._pos

    def read(self, n: int = -1) -> bytes:
        end = len(self._view) if n is None or n < 0 else min(len(self._view), self._pos + n)
        out = bytes(self._view[self._pos:end]) if end > self._pos else b""
        self._pos += len(out)
        return out


class _Window:
    """The ``size`` bytes of ``fh`` from ``start`` as a seekable file of their own (a regular
    file redirected to stdin may have been read from already); what is read of them that
    continues the bytes hashed so far goes into ``digest`` (None: nothing is hashed)."""

    def __init__(self, fh: IO[bytes], start: int, size: int, digest: _Hash | None = None
                 ) -> None:
        self._fh, self._start, self._size = fh, start, size
        self._digest, self._hashed = digest, 0

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._fh.tell() - self._start

    def seek(self, pos: int, whence: int = 0) -> int:
        base = (0, self.tell(), self._size)[whence]
        return self._fh.seek(self._start + max(0, base + pos)) - self._start

    def read(self, n: int = -1) -> bytes:
        at = self.tell()
        left = max(0, self._size - at)
        data = self._fh.read(left if n is None or n < 0 else min(n, left))
        self._hash(at, data)
        return data

    def readinto(self, view: memoryview) -> int:
        """Read into ``view`` (a binary file's ``readinto``: large pieces straight from the
        file, no copy)."""
        at = self.tell()
        n = cast("io.BufferedReader", self._fh).readinto(view[:max(0, self._size - at)])
        self._hash(at, view[:n])
        return n

    def _hash(self, at: int, data: bytes | memoryview) -> None:
        if self._digest is not None and at <= self._hashed < at + len(data):
            with memoryview(data) as whole:
                self._digest.update(whole[self._hashed - at:])
            self._hashed = at + len(data)

    def hash_rest(self) -> bool:
        """Hash the bytes after those hashed so far, read in pieces of :data:`WRITE_CHUNK`
        (a zip file's directory, which is read first, and the members not read in order);
        whether all ``size`` bytes were there to hash."""
        if self._digest is None or self._hashed >= self._size:
            return True
        self.seek(self._hashed)
        buf = memoryview(bytearray(min(WRITE_CHUNK, self._size - self._hashed)))
        while self.readinto(buf):
            pass
        return self._hashed >= self._size


def _open(path: str | os.PathLike[str], label: str, what: str
          ) -> tuple[io.BufferedReader, int]:
    """``path`` open for reading and its size (0: not a regular file), after the checks of a
    directory and of a regular file over the limit; an OS error is one clear
    :class:`CodeFileError`."""
    try:
        fh = open(path, "rb")  # noqa: SIM115 (returned open: the caller closes it)
    except FileNotFoundError:
        raise CodeFileError(f"{label}: no such file") from None
    except IsADirectoryError:
        raise CodeFileError(f"{label}: is a directory, expected {what}") from None
    except PermissionError:
        raise CodeFileError(f"{label}: permission denied") from None
    except OSError as exc:
        raise CodeFileError(f"{label}: cannot read ({exc.strerror or exc})") from None
    except ValueError:  # e.g. an embedded NUL byte
        raise CodeFileError(f"{label!r}: invalid path") from None
    try:
        info = os.fstat(fh.fileno())
        if stat.S_ISDIR(info.st_mode):
            raise CodeFileError(f"{label}: is a directory, expected {what}")
        if stat.S_ISREG(info.st_mode) and info.st_size > MAX_FILE_BYTES:
            raise CodeFileError(f"{label}: file is larger than the limit of "
                                f"{MAX_FILE_BYTES // _MIB} MiB ({info.st_size:,} bytes)")
    except OSError as exc:
        fh.close()
        raise CodeFileError(f"{label}: cannot read ({exc.strerror or exc})") from None
    except BaseException:
        fh.close()
        raise
    return fh, info.st_size if stat.S_ISREG(info.st_mode) else 0


@contextmanager
def _opened(path: str | os.PathLike[str], label: str, what: str
            ) -> Iterator[tuple[io.BufferedReader, int]]:
    """:func:`_open` for the block, which reads it: an OS error while it is read is one clear
    :class:`CodeFileError`."""
    fh, size = _open(path, label, what)
    with fh:
        try:
            yield fh, size
        except IsADirectoryError:  # reading a directory opened where open() allows it
            raise CodeFileError(f"{label}: is a directory, expected {what}") from None
        except OSError as exc:
            raise CodeFileError(f"{label}: cannot read ({exc.strerror or exc})") from None


def stdin_once(*paths: str | os.PathLike[str] | None) -> None:
    """Refuse more than one of the inputs ``paths`` being stdin (``-``): it can be read only
    once (the second reader would see an empty input)."""
    if sum(1 for path in paths if path is not None and str(path) == "-") > 1:
        raise InvalidInput("stdin ('-') can be read only once; give at most one input as '-'")


@contextmanager
def open_text(path: str | os.PathLike[str], what: str) -> Iterator[IO[str]]:
    """A UTF-8 text stream on a whole input (a byte-order mark is skipped), with the checks of
    :func:`read_bytes` (size limit, directories, OS errors as one :class:`CodeFileError`).

    A regular file is streamed from disk, so a parser that reads it piece by piece (numpy's
    ``loadtxt``) never holds the whole text; stdin, FIFOs and devices go through
    :func:`read_bytes`.  Undecodable bytes raise ``UnicodeDecodeError`` while reading."""
    import io

    label = str(path)
    try:
        info = os.stat(path) if label != "-" else None
    except (OSError, ValueError):
        info = None  # read_bytes reports the error in its words
    if info is None or not stat.S_ISREG(info.st_mode):
        data, _ = read_bytes(path, what)
        yield io.StringIO(data.decode("utf-8-sig"), newline="")
        return
    if info.st_size > MAX_FILE_BYTES:
        raise CodeFileError(f"{label}: file is larger than the limit of "
                            f"{MAX_FILE_BYTES // _MIB} MiB ({info.st_size:,} bytes)")
    if info.st_size == 0:
        raise CodeFileError(f"{label}: empty input, expected {what}")
    try:
        fh = open(path, encoding="utf-8-sig", newline="")  # noqa: SIM115 (yielded, closed below)
    except PermissionError:
        raise CodeFileError(f"{label}: permission denied") from None
    except OSError as exc:
        raise CodeFileError(f"{label}: cannot read ({exc.strerror or exc})") from None
    with fh:
        yield fh


def npz_members(data: bytes | memoryview | NpzFile, names: tuple[str, ...],
                max_entries: dict[str, int] | None = None) -> dict[str, Any]:
    """Arrays ``names`` of the NPZ ``data`` (its bytes, or an :class:`NpzFile` read from its
    file), validated before they are allocated.

    Raises :class:`CodeFileError` (without the file label) for anything malformed: a broken or
    truncated zip, a member name listed twice (ambiguous), a missing member, a member above
    the size limit (zip bombs), an invalid ``.npy`` header, an object (pickled) array, or more
    entries than ``max_entries[name]`` (default :data:`~gctool.limits.MAX_ENTRIES`).
    """
    import io
    import zipfile

    try:
        archive = (data.directory() if isinstance(data, NpzFile)  # read once
                   else zipfile.ZipFile(io.BytesIO(data) if isinstance(data, bytes)  # no copy
                                        else _ViewFile(memoryview(data))))
        listed = archive.namelist()
        present = set(listed)
        if len(present) != len(listed):  # one reader takes the first copy, another the last
            twice = next(name for name in listed if listed.count(name) > 1)
            raise CodeFileError(f"ambiguous NPZ: the member {twice[:80]!r} appears "
                                f"{listed.count(twice)} times")
        missing = [name for name in names if name + ".npy" not in present]
        if missing:
            raise CodeFileError(f"NPZ needs arrays {', '.join(map(repr, names))}; "
                                f"missing {', '.join(map(repr, missing))}")
        return {name: _member(archive, name, (max_entries or {}).get(name, MAX_ENTRIES), data)
                for name in names}
    except CodeFileError:
        raise
    except MemoryError:
        raise CodeFileError("malformed NPZ (an array is too large to load)") from None
    except Exception as exc:  # BadZipFile, CRC errors, zlib.error, EOFError, ValueError, ...
        text = " ".join(str(exc).split())[:120]
        raise CodeFileError(f"malformed NPZ ({type(exc).__name__}: {text})") from None


def npz_unpacked(data: bytes | memoryview | NpzFile | IO[bytes], size: int,
                 members: tuple[str, ...] = ("B.npy", "meta.npy")) -> tuple[int, int]:
    """The bytes that reading the NPZ ``data`` of ``size`` bytes (its bytes, an
    :class:`NpzFile`, or a seekable file from where it stands, left there) unpacks, and the
    bytes they are packed in: the uncompressed and compressed sizes that its zip directory
    records of its compressed ``members`` within the member limit (the reading unpacks no
    more: zipfile stops a member at its recorded size, and a member above the limit is
    refused unread); (0, 0) when its directory cannot be read (the reading then says what
    is wrong).  Of an :class:`NpzFile`, the directory that its read then reads the members
    with (:meth:`NpzFile.directory`: read once)."""
    import io
    import zipfile

    if isinstance(data, NpzFile):
        try:
            return _unpacked_sizes(data.directory().infolist(), size, members)
        except Exception:  # noqa: BLE001 (a malformed file: its reading says what is wrong)
            return 0, 0
    fh: Any = (io.BytesIO(data) if isinstance(data, bytes) else _ViewFile(data)
               if isinstance(data, memoryview) else data)
    start = fh.tell()
    try:
        with zipfile.ZipFile(_Window(fh, start, size)) as archive:  # its directory only
            return _unpacked_sizes(archive.infolist(), size, members)
    except Exception:  # noqa: BLE001 (a malformed file: its reading says what is wrong)
        return 0, 0
    finally:
        fh.seek(start)


def _unpacked_sizes(infos: list[Any], size: int, members: tuple[str, ...]
                    ) -> tuple[int, int]:
    """:func:`npz_unpacked` from the zip directory entries ``infos`` of a file of ``size``
    bytes."""
    import zipfile

    packed = [i for i in infos
              if i.filename in members and i.compress_type != zipfile.ZIP_STORED
              and i.file_size <= MAX_NPZ_MEMBER_BYTES]
    return sum(i.file_size for i in packed), sum(min(i.compress_size, size) for i in packed)


def _member(archive: Any, name: str, max_entries: int, data: bytes | memoryview | NpzFile
            ) -> np.ndarray:
    import zipfile

    import numpy as np

    info = archive.getinfo(name + ".npy")
    if info.file_size > MAX_NPZ_MEMBER_BYTES:
        raise CodeFileError(f"NPZ array {name!r} unpacks to {info.file_size:,} bytes, above the "
                            f"limit of {MAX_NPZ_MEMBER_BYTES // _MIB} MiB")
    fmt = np.lib.format
    with archive.open(info) as fh:
        version = fmt.read_magic(fh)
        reader = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        shape, fortran, dtype = reader(fh, max_header_size=MAX_NPY_HEADER_BYTES)
        if dtype.hasobject:
            raise CodeFileError(f"NPZ array {name!r} holds pickled objects, which gctool never "
                                "loads")
        count = prod(shape)
        if count > max_entries:
            raise CodeFileError(f"NPZ array {name!r} has {count:,} entries (shape "
                                f"{tuple(shape)}), above the limit of {max_entries:,}")
        if count * dtype.itemsize > info.file_size - fh.tell():
            raise CodeFileError(f"NPZ array {name!r} is truncated ({info.file_size:,} bytes "
                                f"for shape {tuple(shape)} of {dtype})")
        header = fh.tell()
        nbytes = count * dtype.itemsize
        if isinstance(data, NpzFile) and info.compress_type == zipfile.ZIP_STORED:
            flat = np.frombuffer(_stored_read(data.file, info, header, nbytes), dtype=dtype,
                                 count=count)
        elif isinstance(data, NpzFile) or (stored := _stored_view(data, info)) is None:
            # compressed (or writable data): unpacked into a buffer of its own
            flat = np.frombuffer(_unpacked(fh, name, nbytes), dtype=dtype, count=count)
        else:  # a read-only view of the input: no copy of a large B
            flat = np.frombuffer(stored, dtype=dtype, count=count, offset=header)
    return flat.reshape(shape, order="F" if fortran else "C")


#: bytes of a compressed member unpacked per read (zipfile holds a few times as much meanwhile:
#: 1 MiB pieces peaked 3 MB above the buffer, these 0.8)
UNPACK_CHUNK = 1 << 18


def _unpacked(fh: IO[bytes], name: str, nbytes: int) -> memoryview:
    """The next ``nbytes`` of the zip member ``fh`` (an array's data, unpacked as it is read)
    in a fresh :func:`_read_buffer`, as a read-only view: as immutable as the input's bytes,
    so :meth:`gctool.algebra.fields.Field.coerce` keeps the array without a copy (numpy's
    reader made an array of its own, which the model copied: a compressed 34 MB B peaked at
    the compressed file plus twice B).  The member is then read to its end, where zipfile
    checks its CRC."""
    buf = _aligned_buffer(nbytes)
    view = buf.data
    got = 0
    while got < nbytes:
        n = cast("io.BufferedIOBase", fh).readinto(view[got:got + UNPACK_CHUNK])
        if not n:
            raise CodeFileError(f"NPZ array {name!r} is truncated (its data ends after "
                                f"{got:,} of {nbytes:,} bytes)")
        got += n
    while fh.read(UNPACK_CHUNK):  # the rest of the member (numpy ignores it), to its CRC
        pass
    del view
    buf.flags.writeable = False
    return buf.data


def _aligned_buffer(nbytes: int) -> np.ndarray:
    """A fresh :func:`_read_buffer` of ``nbytes`` bytes at a :data:`DATA_ALIGN` aligned
    address (numpy's own allocation is 16-byte aligned)."""
    import numpy as np

    base = np.empty(nbytes + DATA_ALIGN, dtype=np.uint8)
    shift = -base.ctypes.data % DATA_ALIGN
    return base[shift:shift + nbytes].view(_read_buffer())


def _stored_read(window: _Window, info: Any, header: int, nbytes: int) -> memoryview:
    """The ``nbytes`` of array data after the ``header`` bytes of ``.npy`` header of the stored
    (uncompressed) zip member ``info`` of ``window``, read from the file straight into a
    fresh :func:`_aligned_buffer` (one read: no copy, no piece held twice), as a read-only
    view, after the CRC-32 of the whole member (header, data and any bytes after the data,
    which numpy ignores) is checked against the one the zip file records."""
    import zlib

    window.seek(info.header_offset)
    start = _stored_start(window.read(30), info)
    window.seek(start)
    crc = zlib.crc32(window.read(header))
    buf = _aligned_buffer(nbytes)
    view = buf.data
    got = 0
    while got < nbytes:
        n = window.readinto(view[got:])
        if not n:
            raise CodeFileError(f"NPZ array {info.filename[:-4]!r} is truncated (its data "
                                f"ends after {got:,} of {nbytes:,} bytes)")
        got += n
    crc = zlib.crc32(view, crc)
    left = info.file_size - header - nbytes
    while left > 0:  # bytes after the array's data, in the member's CRC
        piece = window.read(min(left, WRITE_CHUNK))
        if not piece:
            break
        crc, left = zlib.crc32(piece, crc), left - len(piece)
    if left or crc != info.CRC:
        raise CodeFileError(f"malformed NPZ (BadZipFile: Bad CRC-32 for file {info.filename!r})")
    del view
    buf.flags.writeable = False
    return buf.data


def _stored_start(local: bytes | memoryview, info: Any) -> int:
    """Where the bytes of the stored zip member ``info`` begin, from the 30 bytes ``local`` of
    its local header; a member whose header is not there, or whose directory entry records
    other than as many bytes stored as it holds, is refused (one line)."""
    if len(local) < 30 or local[:4] != b"PK\x03\x04":
        raise CodeFileError(f"malformed NPZ (bad local header of {info.filename!r})")
    if info.compress_size != info.file_size:
        raise CodeFileError(f"malformed NPZ (the stored member {info.filename!r} records "
                            f"{info.compress_size:,} bytes stored for {info.file_size:,})")
    return (info.header_offset + 30 + int.from_bytes(local[26:28], "little")
            + int.from_bytes(local[28:30], "little"))


def _stored_view(data: bytes | memoryview, info: Any) -> memoryview | None:
    """The bytes of an uncompressed (stored) zip member inside ``data``, CRC checked, without
    a copy; None for a compressed member (numpy's reader then unpacks it) or writable
    ``data``."""
    import zipfile
    import zlib

    if info.compress_type != zipfile.ZIP_STORED or not memoryview(data).readonly:
        return None
    at = info.header_offset
    start = _stored_start(data[at:at + 30], info)
    view = memoryview(data)[start:start + info.file_size]
    if len(view) != info.file_size or zlib.crc32(view) != info.CRC:
        raise CodeFileError(f"malformed NPZ (BadZipFile: Bad CRC-32 for file {info.filename!r})")
    return view


# ---------------------------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------------------------
def atomic_write(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same directory, then rename).

    ``-`` writes to stdout.  An existing file is replaced in one step: it is never left
    half-written, and nothing is created or changed when writing fails (the temporary file is
    removed, also on Ctrl-C).  Write errors raise :class:`InvalidInput` naming the file.
    """
    if str(path) == "-":
        _write_stdout(data)
        return
    with atomic_stream(path) as fh:  # one policy for whole and streamed outputs
        view = memoryview(data)
        while view:
            view = view[fh.write(view[:WRITE_CHUNK]):]


@contextmanager
def atomic_stream(path: str | os.PathLike[str]) -> Iterator[IO[bytes]]:
    """A binary stream whose contents replace ``path`` atomically when the block ends normally.

    Same policy as :func:`atomic_write` (temporary file in the target's directory, fsync,
    rename, mode of a replaced file kept, devices and FIFOs written in place), for output
    written piece by piece.  When the block raises (an error, Ctrl-C), the temporary file is
    removed and the target is left as it was.  OS errors raise :class:`InvalidInput` naming
    the file.  ``-`` is refused: streamed output needs a file."""
    label = str(path)
    if label == "-":
        raise InvalidInput("streamed output needs a file, not '-' (stdout)")
    target, existing = _target(_stdout_alias(path), label)
    kept = "the existing file is unchanged" if existing is not None else "no file was written"
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        try:
            with open(target, "wb") as fh:  # /dev/null, a FIFO: cannot be renamed over
                yield fh
        except OSError as exc:
            raise InvalidInput(f"{label}: cannot write ({exc.strerror or exc})") from None
        return
    directory = target.parent
    if not directory.is_dir():
        raise InvalidInput(f"{label}: directory {directory} does not exist")
    mode = stat.S_IMODE(existing.st_mode) if existing is not None else 0o666 & ~_umask()
    prefix = f".{target.name[:64]}."
    try:
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=directory)
    except OSError as exc:
        raise InvalidInput(f"{label}: cannot write ({exc.strerror or exc})") from None
    _remove_stale(directory, prefix, tmp)
    try:
        with os.fdopen(fd, "wb", buffering=WRITE_CHUNK) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as exc:
        _unlink(tmp)
        raise InvalidInput(f"{label}: cannot write ({exc.strerror or exc}); {kept}") from None
    except BaseException:  # Ctrl-C, an error of the producer: never leave a partial file
        _unlink(tmp)
        raise
    _fsync_dir(directory)


def probe_target(path: str | os.PathLike[str]) -> Path | None:
    """The regular file that writing ``path`` creates or replaces (symlinks followed), whose
    directory a write can be timed in (:func:`probe_write`); None for ``-`` (stdout), a device
    or FIFO, or a path its write refuses (its own checks say why, in one line)."""
    if str(path) == "-":
        return None
    try:
        target, existing = _target(_stdout_alias(path), str(path))
    except InvalidInput:
        return None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        return None
    folder = target.parent
    return target if folder.is_dir() and os.access(folder, os.W_OK | os.X_OK) else None


def probe_write(target: Path, nbytes: int, clock: Callable[[], float]) -> float | None:
    """Write ``nbytes`` of a fresh buffer to a temporary file beside ``target`` as
    :func:`atomic_write` writes a file (buffered pieces, then fsync), and remove
    it, also when interrupted or failing (named as atomic_write's own temporary files, which a
    later write of ``target`` removes when a SIGKILL left one); the seconds its write and
    fsync took on ``clock`` (the temporary file's creation and removal, which a file's write
    pays once whatever its size, left out), or None where it was not written (an OSError: the
    write itself reports it)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:64]}.", suffix=".tmp",
                                   dir=target.parent)
    except OSError:
        return None
    try:
        data = b"\xff" * nbytes  # written as a serialised file is (its pages touched)
        with os.fdopen(fd, "wb", buffering=WRITE_CHUNK) as fh:
            start = clock()
            view = memoryview(data)
            while view:
                view = view[fh.write(view[:WRITE_CHUNK]):]
            fh.flush()
            os.fsync(fh.fileno())
            return clock() - start
    except OSError:
        return None
    finally:
        _unlink(tmp)


#: names of the process's standard output as a path
_STDOUT_NAMES = ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")


def _stdout_alias(path: str | os.PathLike[str]) -> str | os.PathLike[str]:
    """``/dev/stdout`` and its aliases name descriptor 1, which the CLI points at /dev/null
    (native libraries print there; see ``gctool.cli.main``): they are mapped to the descriptor
    that ``sys.stdout`` really writes to."""
    if str(path) in _STDOUT_NAMES:
        try:
            fd = sys.stdout.fileno()
        except (AttributeError, OSError, ValueError):
            return path
        if fd != 1:
            sys.stdout.flush()
            return f"/dev/fd/{fd}"
    return path


#: age after which a temporary file of an earlier run to the same target is removed (only a
#: SIGKILL or a power cut leaves one; a run that is still writing touches its file)
STALE_TMP_SECONDS = 24 * 3600


def _remove_stale(directory: Path, prefix: str, own: str) -> None:
    """Remove ``.NAME.XXXX.tmp`` files of earlier, killed runs to the same target (best
    effort; files younger than :data:`STALE_TMP_SECONDS` may belong to a concurrent writer)."""
    import time

    cutoff = time.time() - STALE_TMP_SECONDS
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if (entry.name.startswith(prefix) and entry.name.endswith(".tmp")
                        and len(entry.name) == len(prefix) + 12 and entry.path != own
                        and entry.is_file(follow_symlinks=False)
                        and entry.stat(follow_symlinks=False).st_mtime < cutoff):
                    _unlink(entry.path)
    except OSError:
        pass


def check_output(path: str | os.PathLike[str]) -> None:
    """Refuse, before any work, an output that could not be written: a name ending in ``/``
    (a directory's), an existing directory, a missing directory, a file the user may not
    write (:class:`InvalidInput`, one line).  ``-`` (stdout), devices and FIFOs pass."""
    label = str(path)
    if label == "-":
        return
    target, existing = _target(_stdout_alias(path), label)
    if existing is None and not target.parent.is_dir():
        raise InvalidInput(f"{label}: directory {target.parent} does not exist")
    if existing is None or stat.S_ISREG(existing.st_mode):  # written by a rename in its folder
        _check_folder(target.parent, label, existing is not None)


def _check_folder(folder: Path, label: str, existing: bool) -> None:
    """Refuse a regular file whose directory does not accept a new file (the temporary file
    of :func:`atomic_stream`): a read-only file system, or no write permission."""
    if os.access(folder, os.W_OK | os.X_OK):
        return
    try:
        readonly = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        readonly = False
    why = "a read-only file system" if readonly else "permission denied"
    then = "it was left unchanged" if existing else "no file was written"
    raise InvalidInput(f"{label}: cannot create files in {folder} ({why}); {then}")


def _target(path: str | os.PathLike[str], label: str) -> tuple[Path, os.stat_result | None]:
    """The file to replace (symlinks followed) and its current status (None if absent)."""
    if not label:
        raise InvalidInput("the output file name is empty")
    if label.endswith(("/", "/.", "/..")) or label in (".", ".."):
        raise InvalidInput(f"{label}: names a directory; give a file name")
    try:
        target = Path(path)
        if target.is_symlink():
            real = Path(os.path.realpath(target))
            if real.exists() or not target.exists():  # not for /dev/fd/N of a pipe
                target = real
        existing: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        existing = None
    except ValueError:
        raise InvalidInput(f"{label!r}: invalid path") from None
    except OSError as exc:
        raise InvalidInput(f"{label}: cannot write ({exc.strerror or exc})") from None
    if existing is not None and stat.S_ISDIR(existing.st_mode):
        raise InvalidInput(f"{label}: is a directory")
    if existing is not None and not _writable(target):
        raise InvalidInput(f"{label}: permission denied (the file is not writable); "
                           "it was left unchanged")
    return target, existing


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK)


def _write_stdout(data: bytes) -> None:
    try:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise InvalidInput(f"stdout: cannot write ({exc.strerror or exc})") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _fsync_dir(directory: Path) -> None:
    """Make the rename durable (best effort: not every file system supports it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
