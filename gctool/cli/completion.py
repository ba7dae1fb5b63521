"""Shell completion scripts generated from the CLI (``completions/`` holds the committed copies).

Regenerate them with ``python -m gctool.cli.completion`` (a test fails when they are stale).
"""

from __future__ import annotations

import sys
from pathlib import Path

SHELLS = {"bash": "gctool.bash", "zsh": "_gctool", "fish": "gctool.fish"}


def generate(shell: str) -> str:
    from click.shell_completion import get_completion_class

    from gctool.cli.main import cli

    cls = get_completion_class(shell)
    if cls is None:  # pragma: no cover - click ships all three
        raise ValueError(f"unsupported shell {shell!r}")
    return cls(cli, {}, "gctool", "_GCTOOL_COMPLETE").source() + "\n"


def write_all(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for shell, name in SHELLS.items():
        (directory / name).write_text(generate(shell))


if __name__ == "__main__":  # python -m gctool.cli.completion [DIRECTORY]
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and sys.argv[1].startswith("-")):
        sys.exit("usage: python -m gctool.cli.completion [DIRECTORY] (default: completions)")
    write_all(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("completions"))
