"""benchmarks/README.md is written by the benchmark scripts, never by hand.

Run a script with ``--write-readme`` (on a quiet machine: the figures are measured ratios) and
its section of the README, between ``<!-- begin NAME -->`` and ``<!-- end NAME -->``, is
replaced by the command that ran and the report the script printed; the other sections are
left as they are.  Every script ends with::

    if __name__ == "__main__":
        with readme.section(__file__):
            main()
"""

from __future__ import annotations

import contextlib
import io
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

from gctool._memory import keep_heap

README = Path(__file__).with_name("README.md")
FLAG = "--write-readme"


def render(name: str, command: str, output: str) -> str:
    """The section of script ``name``: the command that ran and what it printed."""
    return (f"<!-- begin {name} -->\n```sh\n{command}\n```\n\n```text\n{output.rstrip()}\n```\n"
            f"<!-- end {name} -->")


def replace_section(text: str, name: str, section: str) -> str:
    """``text`` with the section of ``name`` replaced (appended when it has none yet)."""
    begin, end = f"<!-- begin {name} -->", f"<!-- end {name} -->"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        return head + section + rest.split(end, 1)[1]
    return text.rstrip("\n") + "\n\n" + section + "\n"


def replace_part(text: str, name: str, part: str, block: str) -> str:
    """``text`` with part ``part`` of script ``name``'s section replaced by ``block``: the
    section keeps one block per part (e.g. per machine), and drops anything else it held
    (the "not recorded yet" line)."""
    begin, end = f"<!-- begin {name} -->", f"<!-- end {name} -->"
    body = text.split(begin, 1)[1].split(end, 1)[0] if begin in text and end in text else ""
    parts, rest = [], body
    while (start := rest.find(f"<!-- begin {name} ")) >= 0:
        head = rest[start:]
        key = head[len(f"<!-- begin {name} "):].split(" -->", 1)[0]
        close = f"<!-- end {name} {key} -->"
        if close not in head:
            break
        parts.append((key, head.split(close, 1)[0] + close))
        rest = head.split(close, 1)[1]
    keys = [k for k, _ in parts]
    blocks = dict(parts)
    blocks[part] = block
    if part not in keys:
        keys.append(part)
    inner = "\n\n".join(blocks[k] for k in keys)
    return replace_section(text, name, f"{begin}\n{inner}\n{end}")


@contextlib.contextmanager
def section(script: str, readme: Path = README, part: str | None = None) -> Iterator[None]:
    """Run the body in a process whose heap is kept as the command line keeps it
    (:func:`gctool._memory.keep_heap`: what a script times is what a command pays); with
    ``--write-readme`` among the arguments (removed before the script parses them), print as
    usual and also write what was printed to the script's section (with ``part``, to that
    part of it only: :func:`replace_part`)."""
    keep_heap()
    if FLAG not in sys.argv[1:]:
        yield
        return
    sys.argv.remove(FLAG)
    name = Path(script).name
    command = shlex.join(["python", f"benchmarks/{name}", *sys.argv[1:]])
    buf, out = io.StringIO(), sys.stdout

    class Tee(io.TextIOBase):
        def write(self, s: str) -> int:
            buf.write(s)
            return out.write(s)

        def flush(self) -> None:
            out.flush()

    with contextlib.redirect_stdout(Tee()):
        yield
    text = readme.read_text(encoding="utf-8")
    if part is None:
        text = replace_section(text, name, render(name, command, buf.getvalue()))
    else:
        text = replace_part(text, name, part,
                            render(f"{name} {part}", command, buf.getvalue()))
    readme.write_text(text, encoding="utf-8")
