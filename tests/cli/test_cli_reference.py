"""The README's "Command line" table names exactly the parser's commands and options, and
every command's --help documents the exit codes."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from tdsl.cli import EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_OK, EXIT_VERDICT, main, parser

ROOT = Path(__file__).resolve().parent.parent.parent
README = (ROOT / "README.md").read_text()
GLOBAL = {"-v", "--verbose", "-q", "--quiet"}


def _section(title: str) -> str:
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 1)
    return README[start : end if end > 0 else None]


def _table() -> dict[str, set[str]]:
    """{command ('' for the top level): option strings} from the README table."""
    rows: dict[str, set[str]] = {}
    for line in _section("Command line").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].startswith("`tdsl"):
            continue
        words = cells[0].strip("`").split()
        command = words[1] if len(words) > 1 else ""
        options: set[str] = set()
        for code in re.findall(r"`([^`]+)`", cells[1]):
            first = re.split(r"[ =]", code, maxsplit=1)[0]
            options.update(first.split("/"))
        rows[command] = options
    return rows


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    top = parser()
    action = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _options(p: argparse.ArgumentParser) -> set[str]:
    return {s for a in p._actions for s in a.option_strings if s not in ("-h", "--help")}


def test_the_table_lists_every_command_and_nothing_else() -> None:
    assert set(_table()) == {"", *_subparsers()}


def test_top_level_options_match() -> None:
    assert _table()[""] == _options(parser())


@pytest.mark.parametrize("command", sorted(_subparsers()))
def test_command_options_match(command: str) -> None:
    in_parser = _options(_subparsers()[command])
    assert GLOBAL <= in_parser, "-v/-q are accepted after the command too"
    assert _table()[command] == in_parser - GLOBAL


@pytest.mark.parametrize("command", [None, *sorted(_subparsers())])
def test_help_documents_the_exit_codes(capsys, command: str | None) -> None:
    assert main([command, "--help"] if command else ["--help"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "exit codes:" in out
    for code in (EXIT_OK, EXIT_VERDICT, EXIT_BAD_INPUT, EXIT_INTERNAL):
        assert f"\n  {code} " in out
    assert "compiler failure" in out


def test_serial_loading_opt_out_says_why(capsys) -> None:
    assert main(["compile", "--help"]) == EXIT_OK
    text = " ".join(capsys.readouterr().out.split())
    assert "--no-serial-loading" in text and "deadlock" in text and "--mlir-disable-threading" in text


def test_verbosity_before_and_after_the_command() -> None:
    assert parser().parse_args(["-v", "show", "x.py"]).verbose == 1
    assert parser().parse_args(["show", "x.py", "-vv"]).verbose == 2
    assert parser().parse_args(["show", "x.py", "-q"]).quiet is True


def test_verbose_and_quiet_exclude_each_other(capsys) -> None:
    assert main(["show", "x.py", "-v", "-q"]) == EXIT_BAD_INPUT
    assert "not allowed with argument" in capsys.readouterr().err
