"""The ``tdsl`` command line: render, flags, show.

Exit codes: 0 success; 2 bad input (invalid strategy, unreadable file, unknown target)
with a one-line message on stderr; 1 when a rendered script fails verification (a bug
report: the message shows the script).
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Callable, NoReturn, Sequence

from .iree.phases import PHASES
from .iree.iree_compile import CompileFailed
from .iree.iree_compile import DEFAULT_MEMORY_GB, DEFAULT_TIMEOUT_S
from . import __version__
from .errors import RenderError, StrategyError, TdslError
from .spec.loader import dump, load
from .render import render


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
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


def _cmd_compile(args: argparse.Namespace) -> int:
    from .iree.compile import compile

    report = compile(
        args.payload,
        args.strategies,
        args.target,
        args.output,
        dump_ir=args.dump_ir,
        strict=args.strict,
        timeout_s=args.timeout,
        memory_gb=args.memory_gb,
    )
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        text = report.text()
        if not args.report:
            text = text.split("\n  kernel resources:")[0]
        print(text)
        for warning in report.warnings():
            print(f"tdsl: warning: {warning}", file=sys.stderr)
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    import numpy as np

    from .iree.numerics import NumericsFailed, run

    inputs = [np.load(p) for p in args.inputs] if args.inputs else None
    try:
        report = run(
            args.payload,
            args.strategies,
            args.target,
            inputs=inputs,
            seed=args.seed,
            timeout_s=args.timeout,
            memory_gb=args.memory_gb,
        )
    except NumericsFailed as err:
        print(json.dumps(err.report.to_json(), indent=2) if args.json else err.report.text())
        print("tdsl: error: results differ from the reference beyond tolerance", file=sys.stderr)
        return 1
    print(json.dumps(report.to_json(), indent=2) if args.json else report.text())
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from .iree.bench import bench, plot

    threads = tuple(int(t) for t in args.threads.split(","))
    report = bench(
        args.payload,
        args.strategies,
        args.target,
        threads=threads,
        repetitions=args.repetitions,
        min_time_s=args.min_time,
        numpy_baseline=not args.no_numpy,
        timeout_s=args.timeout,
        memory_gb=args.memory_gb,
    )
    if args.plot:
        plot(report, args.plot)
    print(json.dumps(report.to_json(), indent=2) if args.json else report.table())
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    sys.stdout.write(dump(load(args.strategies), args.format))
    return 0


def _add_limits(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help=f"seconds per iree-compile run (default {DEFAULT_TIMEOUT_S:g})")
    p.add_argument("--memory-gb", type=float, default=DEFAULT_MEMORY_GB, help=f"address-space cap of iree-compile in GiB (default {DEFAULT_MEMORY_GB:g})")


def _add_payload_args(p: argparse.ArgumentParser, cpu_only: bool) -> None:
    p.add_argument("payload", type=Path, help="payload program (.mlir)")
    p.add_argument("--strategies", required=True, metavar="FILE[:NAME]", help="strategy file")
    if cpu_only:
        p.add_argument("--target", default="cpu", help="CPU target name in the strategy set (default: cpu)")
    else:
        p.add_argument("--target", required=True, help="target name in the strategy set, e.g. cpu or gfx942")


def _add_strategy_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("strategies", metavar="FILE[:NAME]", help="strategy file: .py (optionally :NAME of a StrategySet), .yaml or .json")
    p.add_argument("--target", required=True, help="target name in the strategy set, e.g. cpu or gfx942")


def _compiler_version() -> str:
    try:
        return version("iree-base-compiler")
    except PackageNotFoundError:
        return "not installed"


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog="tdsl", description="Render tdsl strategies to verified IREE transform-dialect scripts.")
    top.add_argument("--version", action="version", version=f"tdsl {__version__} (iree-base-compiler {_compiler_version()})")
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

    p = sub.add_parser("compile", help="compile a payload with the strategies and report what applied", description="Render and verify the strategies, run iree-compile with them under a timeout and memory cap, and report which rules applied to which dispatches. Any 'error:' from iree-compile is a failure.")
    _add_payload_args(p, cpu_only=False)
    p.add_argument("-o", "--output", type=Path, help="write the compiled module (.vmfb) here")
    p.add_argument("--dump-ir", choices=PHASES, help="also write the IR at this phase next to the output")
    p.add_argument("--strict", action="store_true", help="a rule that matches nothing is an error")
    p.add_argument("--report", action="store_true", help="rocm: print each kernel's LDS, registers, spills and MFMA count (also in --json)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    _add_limits(p)
    p.set_defaults(run=_cmd_compile)

    p = sub.add_parser("run", help="compile, run on CPU and check numbers against references", description="Compile with the strategies and with IREE's default pipeline, run every function on CPU on the same deterministic inputs, and compare with the default build and numpy (plain matmul / batch matmul / convolution). Exits 1 past tolerance.")
    _add_payload_args(p, cpu_only=True)
    p.add_argument("--inputs", nargs="+", type=Path, metavar="X.npy", help="input arrays instead of seeded random ones")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    _add_limits(p)
    p.set_defaults(run=_cmd_run)

    p = sub.add_parser("bench", help="time the strategy against IREE default, IREE data tiling and numpy", description="Compile the payload with the strategies, with IREE's default pipeline and with --iree-opt-data-tiling, and time every function side by side with numpy (plain matmul / batch matmul / convolution): interleaved repetitions, medians, ratios, GFLOP/s.")
    _add_payload_args(p, cpu_only=True)
    p.add_argument("--threads", default="1", help="comma-separated thread counts, e.g. 1,2 (default 1)")
    p.add_argument("--repetitions", type=int, default=5, help="interleaved rounds (default 5)")
    p.add_argument("--min-time", type=float, default=0.1, help="seconds of back-to-back calls per sample (default 0.1)")
    p.add_argument("--no-numpy", action="store_true", help="skip the numpy baseline")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--plot", type=Path, metavar="OUT.png", help="also write a bar chart (needs matplotlib)")
    _add_limits(p)
    p.set_defaults(run=_cmd_bench)

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
    except CompileFailed as err:
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
