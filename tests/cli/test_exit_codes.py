"""The exit-code contract is public: pin it."""

from gctool.cli.exit_codes import ExitCode


def test_exit_codes_are_pinned() -> None:
    assert {c.name: int(c) for c in ExitCode} == {
        "OK": 0, "FINDING": 1, "USAGE": 2, "INTERNAL": 3, "HANGUP": 129,
        "INTERRUPTED": 130, "TERMINATED": 143,
    }


def test_docs_document_every_exit_code() -> None:
    from pathlib import Path

    page = (Path(__file__).parents[2] / "docs" / "cli.md").read_text()
    section = page.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    for code in ExitCode:
        assert f"| {int(code)} " in section, code


def test_exit_code_of_a_report() -> None:
    """One decision for every command: ok -> 0, not ok or a failed CI gate -> 1, and an
    informational run (bound without --check) -> 0 whatever it found."""
    from types import SimpleNamespace

    from gctool.cli.exit_codes import exit_code
    from gctool.reports import DesignReport

    assert exit_code(SimpleNamespace(ok=True)) == ExitCode.OK
    assert exit_code(SimpleNamespace(ok=False)) == ExitCode.FINDING
    assert exit_code(SimpleNamespace(ok=False), gate=False) == ExitCode.OK
    gated = SimpleNamespace(ok=True, gates={"failures": ["--strict: ill-conditioned"]})
    assert exit_code(gated) == ExitCode.FINDING
    assert exit_code(SimpleNamespace(ok=True, gates={"failures": []})) == ExitCode.OK
    assert exit_code(DesignReport("x.json", "frc", 6, 6, 2, "real", None, 10)) == ExitCode.OK


def test_every_report_a_command_prints_has_a_renderer() -> None:
    """Each report class a command's JSON schema lists is rendered by the one layer (show
    renders the picture whose JSON is the ShowReport)."""
    from gctool import schemas
    from gctool.cli.render import renderers

    for name, (_, classes) in schemas.REPORTS.items():
        for cls in classes():
            assert ("Picture" if name == "show" else cls.__name__) in renderers(), cls


def test_a_group_without_its_command_is_a_usage_error() -> None:
    """``gctool`` and ``gctool design`` alone: the help on stderr, nothing on stdout, exit 2
    (docs/cli.md, exit codes); ``--help`` is the same help on stdout, exit 0."""
    import subprocess
    import sys

    for words in ([], ["design"]):
        bare = subprocess.run([sys.executable, "-m", "gctool", *words],
                              capture_output=True, text=True, timeout=120, check=False)
        asked = subprocess.run([sys.executable, "-m", "gctool", *words, "--help"],
                               capture_output=True, text=True, timeout=120, check=False)
        assert (bare.returncode, bare.stdout) == (int(ExitCode.USAGE), ""), words
        assert bare.stderr.startswith("Usage: gctool"), words
        assert (asked.returncode, asked.stderr) == (0, ""), words
        assert asked.stdout == bare.stderr, words
