"""The ``tdsl`` parser: the top-level options (-v / -q, --version) and every subcommand,
in the order ``tdsl --help`` lists them."""

from __future__ import annotations

import argparse
from importlib.metadata import PackageNotFoundError, version

from .. import __version__
from . import builds, ops, scripts, tune
from .arguments import CliParser, verbosity_parent
from .exits import EPILOG


def compiler_version() -> str:
    try:
        return version("iree-base-compiler")
    except PackageNotFoundError:
        return "not installed"


def parser() -> argparse.ArgumentParser:
    """``tdsl`` and its subcommands; each parsed command's ``run`` is its handler."""
    top = CliParser(
        prog="tdsl",
        description="Render tdsl strategies to verified IREE transform-dialect scripts, compile, run and benchmark them.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[verbosity_parent(top=True)],
    )
    top.add_argument(
        "--version", action="version", version=f"tdsl {__version__} (iree-base-compiler {compiler_version()})"
    )
    sub = top.add_subparsers(dest="command", required=True, parser_class=CliParser)
    for add in (
        scripts.add_render,
        scripts.add_flags,
        builds.add_compile,
        builds.add_run,
        builds.add_bench,
        ops.add_ops,
        tune.add_tune,
        scripts.add_import,
        scripts.add_show,
        scripts.add_schema,
    ):
        add(sub)
    return top
