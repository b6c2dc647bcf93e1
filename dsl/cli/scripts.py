"""The commands on strategy files and their scripts: ``render``, ``flags``, ``import``,
``show`` and ``schema`` (each its arguments and what it runs)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..compiler.flags import rendered_flags
from ..errors import OutputError
from ..files import atomic_write, replace_files
from ..render import render
from ..render.scripts import FLAGS_FILE, RENDER_FILES
from ..sets.loader import as_strategy_set, dump
from .arguments import Commands, add_command, add_flag_args, add_strategy_args, target_names_text
from .exits import EXIT_OK, os_reason
from .options import check_output_dir, extra_flags, verbosity


def add_render(sub: Commands) -> None:
    """``tdsl render``: write the scripts and flags.txt for one target."""
    p = add_command(
        sub,
        "render",
        help="write the scripts and flags.txt for one target",
        description="Render, verify and write every script the target needs, plus DIR/flags.txt (one iree-compile flag per line).",
    )
    add_strategy_args(p)
    p.add_argument("-o", "--output", required=True, type=Path, metavar="DIR", help="output directory")
    add_flag_args(p, writes_flags=True)
    p.set_defaults(run=_cmd_render)


def add_flags(sub: Commands) -> None:
    """``tdsl flags``: print the iree-compile flags that inject the scripts."""
    p = add_command(
        sub,
        "flags",
        help="print the iree-compile flags for one target",
        description="Render and verify, then print the iree-compile flags that inject the scripts as `tdsl render -o DIR` writes them (nothing is written).",
    )
    add_strategy_args(p)
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="directory the scripts are (to be) written to (default: .)",
    )
    p.add_argument(
        "--no-target-flags", action="store_true", help="print only the script flags, not the target selection"
    )
    add_flag_args(p, writes_flags=True)
    p.set_defaults(run=_cmd_flags)


def add_import(sub: Commands) -> None:
    """``tdsl import``: transform-dialect specs to a strategy set."""
    p = add_command(
        sub,
        "import",
        help="turn transform-dialect specs into an editable strategy set",
        description="Read tuning specs, preprocessing specs or codegen libraries (hand-written, IREE's own, tuners', or tdsl renders) with the MLIR bindings and write the StrategySet they express: one rule per matcher/action pair, sequence names kept. Several files are the scripts of one rendered set and are merged. Older IREE syntax is upgraded where the meaning is clear (each upgrade is noted); a construct tdsl cannot express is an error naming the op and its line, unless --allow-raw keeps it as verified raw MLIR.",
    )
    p.add_argument("specs", nargs="+", type=Path, metavar="SPEC.mlir", help="spec file(s)")
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="OUT.py|OUT.yaml|OUT.json",
        help="write the set here (by suffix); default: the Python module on stdout",
    )
    p.add_argument(
        "--target", help=f"target name for the imported rules (default: from the spec: {target_names_text()})"
    )
    p.add_argument(
        "--allow-raw", action="store_true", help="keep matchers and actions tdsl cannot express as verified raw MLIR"
    )
    p.add_argument(
        "--kind",
        choices=("tuning_spec", "preprocessing", "codegen_library"),
        help="the injection point, when the entry point does not say",
    )
    p.set_defaults(run=_cmd_import)


def add_show(sub: Commands) -> None:
    """``tdsl show``: a strategy set as YAML or JSON."""
    p = add_command(
        sub,
        "show",
        help="print a strategy set as YAML or JSON",
        description="Load a strategy file and print its canonical YAML or JSON form (loads back to an equal set).",
    )
    p.add_argument("strategies", metavar="FILE[:NAME]", help="strategy file")
    p.add_argument("--format", choices=("yaml", "json"), default="yaml")
    p.set_defaults(run=_cmd_show)


def add_schema(sub: Commands) -> None:
    """``tdsl schema``: the JSON Schema of strategy files."""
    p = add_command(
        sub,
        "schema",
        help="print the JSON Schema of strategy files (.yaml / .json)",
        description="Print a JSON Schema (draft 2020-12) of the strategy file format: it accepts the spellings the loader accepts (m: 256, names: linalg.matmul, {one_of: [...]}) and checks kinds, fields, types and ranges; checks that need other fields or the target run when the file is loaded. For editors: '# yaml-language-server: $schema=strategy.schema.json'.",
    )
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write the schema to FILE instead of stdout")
    p.set_defaults(run=_cmd_schema)


def _cmd_render(args: argparse.Namespace) -> int:
    check_output_dir(args.output, "-o")
    extra = extra_flags(args)
    strategy_set = as_strategy_set(args.strategies)
    rendered = render(strategy_set, args.target)
    files = rendered.files(args.output)
    flags = rendered_flags(
        rendered, args.output, serial_loading=not args.no_serial_loading, relative=args.relative, extra=extra
    )
    files[FLAGS_FILE] = "\n".join(flags) + "\n"
    try:
        paths = replace_files(args.output, files, owned=RENDER_FILES)
    except OSError as err:
        raise OutputError(f"-o {str(args.output)!r}: cannot write the scripts: {os_reason(err)}") from None
    for path in paths:
        print(path)
    return EXIT_OK


def _cmd_flags(args: argparse.Namespace) -> int:
    extra = extra_flags(args)
    strategy_set = as_strategy_set(args.strategies)
    rendered = render(strategy_set, args.target)
    flags = rendered_flags(
        rendered,
        args.output,
        include_target=not args.no_target_flags,
        serial_loading=not args.no_serial_loading,
        relative=args.relative,
        extra=extra,
    )
    for flag in flags:
        print(flag)
    return EXIT_OK


def _cmd_import(args: argparse.Namespace) -> int:
    from ..importer import import_command

    if args.output is not None:
        from ..compiler.outputs import check_output_file

        check_output_file(args.output, "-o")
    return import_command(
        args.specs if len(args.specs) > 1 else args.specs[0],
        args.output,
        args.target,
        args.allow_raw,
        args.kind,
        quiet=verbosity(args) < 0,
    )


def _cmd_show(args: argparse.Namespace) -> int:
    sys.stdout.write(dump(as_strategy_set(args.strategies), args.format))
    return EXIT_OK


def _cmd_schema(args: argparse.Namespace) -> int:
    from ..schema import strategy_file_schema

    text = json.dumps(strategy_file_schema(), indent=2) + "\n"
    if args.output is not None:
        from ..compiler.outputs import check_output_file

        check_output_file(args.output, "-o")
        atomic_write(args.output, text)
    else:
        sys.stdout.write(text)
    return EXIT_OK
