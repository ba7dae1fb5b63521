"""The exit-code contract is public: pin it."""

from gctool.cli.exit_codes import ExitCode


def test_exit_codes_are_pinned() -> None:
    assert {c.name: int(c) for c in ExitCode} == {
        "OK": 0, "FINDING": 1, "USAGE": 2, "INTERNAL": 3, "HANGUP": 129,
        "INTERRUPTED": 130, "TERMINATED": 143,
    }


def test_readme_documents_every_exit_code() -> None:
    from pathlib import Path

    readme = (Path(__file__).parents[1] / "README.md").read_text()
    section = readme.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    for code in ExitCode:
        assert f"| {int(code)} " in section, code
