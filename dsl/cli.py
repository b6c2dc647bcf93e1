"""The ``tdsl`` command line: render, flags, show.

Exit codes: 0 success; 2 bad input (invalid strategy, unreadable file, unknown target)
with a one-line message on stderr; 1 when a rendered script fails verification (a bug
report: the message shows the script).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Sequence

from .errors import RenderError, StrategyError, TdslError
from .loader import dump, load
from .render import render


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def _one_line(err: Exception) -> str:
    if isinstance(err, StrategyError):
        return "invalid strategy: " + "; ".join(p.describe(err.strategy) for p in err.problems)
    return " ".join(str(err).split("\n")[:1])


def _cmd_render(args: argparse.Namespace) -> int:
    strategy_set = load(args.strategies)
    rendered = render(strategy_set, args.target)
    paths = rendered.write(args.output)
    for path in paths:
        print(path)
    return 0


def _cmd_flags(args: argparse.Namespace) -> int:
    strategy_set = load(args.strategies)
    rendered = render(strategy_set, args.target)
    for flag in rendered.flags(args.output, include_target=not args.no_target_flags):
        print(flag)
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    sys.stdout.write(dump(load(args.strategies), args.format))
    return 0


def _add_strategy_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("strategies", metavar="FILE[:NAME]", help="strategy file: .py (optionally :NAME of a StrategySet), .yaml or .json")
    p.add_argument("--target", required=True, help="target name in the strategy set, e.g. cpu or gfx942")


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog="tdsl", description="Render tdsl strategies to verified IREE transform-dialect scripts.")
    sub = top.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("render", help="write the scripts and flags.txt for one target", description="Render, verify and write every script the target needs, plus DIR/flags.txt (one iree-compile flag per line).")
    _add_strategy_args(p)
    p.add_argument("-o", "--output", required=True, type=Path, metavar="DIR", help="output directory")
    p.set_defaults(run=_cmd_render)

    p = sub.add_parser("flags", help="print the iree-compile flags for one target", description="Render and verify, then print the iree-compile flags that inject the scripts as `tdsl render -o DIR` writes them (nothing is written).")
    _add_strategy_args(p)
    p.add_argument("-o", "--output", type=Path, default=Path("."), metavar="DIR", help="directory the scripts are (to be) written to (default: .)")
    p.add_argument("--no-target-flags", action="store_true", help="print only the script flags, not the target selection")
    p.set_defaults(run=_cmd_flags)

    p = sub.add_parser("show", help="print a strategy set as YAML or JSON", description="Load a strategy file and print its canonical YAML or JSON form (loads back to an equal set).")
    p.add_argument("strategies", metavar="FILE[:NAME]", help="strategy file")
    p.add_argument("--format", choices=("yaml", "json"), default="yaml")
    p.set_defaults(run=_cmd_show)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except RenderError as err:
        print(f"tdsl: error: {err}", file=sys.stderr)
        return 1
    except TdslError as err:
        print(f"tdsl: error: {_one_line(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tdsl: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
