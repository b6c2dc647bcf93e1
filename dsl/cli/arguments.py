"""The command line's argument parsing: the parser class (one-line errors, exit 2), the
value types (a bad value fails before any work) and the argument groups several commands
share (payload, program, strategies, flags, limits, verbosity)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Callable, NoReturn, TypeAlias, TypeVar

from ..compiler.options import DEFAULT_MEMORY_GB, DEFAULT_TIMEOUT_S, MIN_MEMORY_GB
from ..targets import CpuTarget
from .exits import EPILOG, EXIT_BAD_INPUT

Commands: TypeAlias = "argparse._SubParsersAction[CliParser]"  # the subcommands of the parser
_Number = TypeVar("_Number", int, float)

SERIAL_LOADING_HELP = (
    "do not add --mlir-disable-threading. tdsl adds it when a tuning spec or codegen library "
    "is injected: IREE 3.13 can deadlock when several executables load such a library in "
    "parallel (a worker blocked in getOrLoadTransformLibraryModule; seen in about 1 of 15-60 "
    "compiles). Single-threaded compiles cost about 20%% more time"
)


class CliParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        if "--iree-flag: expected one argument" in message:
            message += " (spell it with '=': --iree-flag=--name=value)"
        self.exit(EXIT_BAD_INPUT, f"tdsl: error: {' '.join(message.split())} (see '{self.prog} --help')\n")


def add_command(sub: Commands, name: str, help: str, description: str) -> CliParser:
    """One subcommand's parser: the exit-code epilog, raw description formatting and -v / -q."""
    return sub.add_parser(
        name,
        help=help,
        description=description,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[verbosity_parent(top=False)],
    )


# --------------------------------------------------------------------------------------
# Argument types: a bad value is argparse's one-line error, exit 2, before any work.


def _number(text: str, kind: Callable[[str], _Number], what: str) -> _Number:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, received {text!r}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected {what}, received {text!r}")
    return value


def positive_float(text: str) -> float:
    """A finite number above 0 (seconds)."""
    value: float = _number(text, float, "a number above 0")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number above 0, received {text!r}")
    return value


def positive_int(text: str) -> int:
    value: int = _number(text, int, "an integer of at least 1")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer of at least 1, received {text!r}")
    return value


def nonnegative_int(text: str) -> int:
    value: int = _number(text, int, "an integer of at least 0")
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer of at least 0, received {text!r}")
    return value


def thread_counts(text: str) -> tuple[int, ...]:
    """``"1,2"`` -> (1, 2); ``all`` is every CPU this process may run on (``1,all`` -> (1, 16)
    on 16); repeats are dropped."""
    from ..measure.machine import usable_cpus

    what = "1, all, or a comma-separated list of thread counts of at least 1, e.g. 1,all"
    parts = [p.strip().lower() for p in text.split(",")]
    try:
        counts = tuple(usable_cpus() if p == "all" else int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, received {text!r}") from None
    if not counts or any(c < 1 for c in counts):
        raise argparse.ArgumentTypeError(f"expected {what}, received {text!r}")
    return tuple(dict.fromkeys(counts))


def peer_names(text: str) -> bool | tuple[str, ...]:
    """``installed`` -> True (every installed peer), ``none`` -> False, ``onnxruntime,openvino``
    -> those names."""
    from ..measure.peers import PEERS

    value = text.strip().lower()
    if value in ("installed", "none"):
        return value == "installed"
    names = tuple(p.strip() for p in value.split(","))
    if not names or any(n not in PEERS for n in names):
        raise argparse.ArgumentTypeError(
            f"expected installed, none or a comma-separated list of {', '.join(PEERS)}, received {text!r}"
        )
    return names


def compared_set(text: str) -> tuple[str, str]:
    """``NAME=FILE[:SET]`` -> (name, strategy file): a strategy set to time under NAME."""
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path.strip() or any(c.isspace() for c in name.strip()):
        raise argparse.ArgumentTypeError(f"expected NAME=FILE[:SET] (a name without spaces), received {text!r}")
    return name.strip(), path.strip()


def memory_gb(text: str) -> float:
    """An address-space cap in GiB that lets iree-compile start (at least MIN_MEMORY_GB)."""
    value: float = _number(text, float, f"a number of GiB of at least {MIN_MEMORY_GB:g}")
    if value < MIN_MEMORY_GB:
        raise argparse.ArgumentTypeError(
            f"expected at least {MIN_MEMORY_GB:g} GiB (iree-compile needs about 0.4 GiB of address "
            f"space just to start), received {text}"
        )
    return value


def target_names_text() -> str:
    """The default targets' names, for help texts (``cpu or gfx942``)."""
    from ..targets import target_names

    return " or ".join(target_names())


def host_targets_text() -> str:
    """The names of the default targets whose modules run on this machine (``cpu``)."""
    from ..targets import default_targets

    return " or ".join(t.name for t in default_targets() if t.runs_on_host)


def add_limits(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--timeout",
        type=positive_float,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"seconds per iree-compile run, above 0 (default {DEFAULT_TIMEOUT_S:g})",
    )
    p.add_argument(
        "--memory-gb",
        type=memory_gb,
        default=DEFAULT_MEMORY_GB,
        metavar="GIB",
        help=f"address-space cap of iree-compile in GiB, at least {MIN_MEMORY_GB:g} (default {DEFAULT_MEMORY_GB:g})",
    )


def add_program_args(p: argparse.ArgumentParser) -> None:
    """--dim and --weights-seed: how a model becomes a static program."""
    p.add_argument(
        "--dim",
        action="append",
        default=[],
        metavar="NAME=SIZE",
        help="fix a dynamic dimension: an ONNX dim_param (batch=1), argN.D or INPUT.D (repeatable)",
    )
    p.add_argument(
        "--weights-seed",
        type=nonnegative_int,
        default=0,
        metavar="N",
        help="seed of the weights drawn for an .onnx model committed without them (default 0)",
    )


def add_parameters_arg(p: argparse.ArgumentParser) -> None:
    """--parameters, for the commands that run the program."""
    p.add_argument(
        "--parameters",
        action="append",
        default=[],
        metavar="[SCOPE=]FILE.irpa",
        help="parameter archive the .mlir program's parameter globals read at load (scope default: model; repeatable)",
    )


def add_payload_args(
    p: argparse.ArgumentParser, cpu_only: bool, strategies_required: bool = True, without: str = ""
) -> None:
    """The payload, its program arguments, ``--strategies`` (optional where ``without`` says
    what the command does without it) and ``--target``."""
    p.add_argument("payload", type=Path, help="payload program: .onnx model, or .mlir (torch/ONNX dialect or linalg)")
    add_program_args(p)
    if strategies_required:
        p.add_argument("--strategies", required=True, metavar="FILE[:NAME]", help="strategy file")
    else:
        p.add_argument(
            "--strategies",
            metavar="FILE[:NAME]",
            help="strategy file; without it, "
            + (
                without
                or f"IREE's default pipeline for --target ({target_names_text()}): the report to read before writing a rule"
            ),
        )
    if cpu_only:
        add_parameters_arg(p)
        cpu = CpuTarget.default_name
        p.add_argument("--target", default=cpu, help=f"CPU target name in the strategy set (default: {cpu})")
    else:
        p.add_argument("--target", required=True, help=f"target name in the strategy set, e.g. {target_names_text()}")


def add_strategy_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "strategies",
        metavar="FILE[:NAME]",
        help="strategy file: .py (optionally :NAME of a StrategySet), .yaml or .json",
    )
    p.add_argument("--target", required=True, help=f"target name in the strategy set, e.g. {target_names_text()}")


def add_flag_args(p: argparse.ArgumentParser, writes_flags: bool) -> None:
    """--iree-flag, --flags-file, --no-serial-loading (and --relative for render/flags)."""
    into = " (written into flags.txt after tdsl's flags)" if writes_flags else " (to every build, after tdsl's flags)"
    p.add_argument(
        "--iree-flag",
        action="append",
        metavar="FLAG",
        help="one more iree-compile flag, repeatable; spell it with '=': --iree-flag=--iree-opt-level=O3" + into,
    )
    p.add_argument(
        "--flags-file",
        action="append",
        type=Path,
        metavar="FILE",
        help="iree-compile flags from FILE (shell words, # comments), e.g. a flags.txt; relative paths "
        "in it are taken relative to FILE's directory" + into,
    )
    p.add_argument("--no-serial-loading", action="store_true", help=SERIAL_LOADING_HELP)
    if writes_flags:
        p.add_argument(
            "--relative",
            action="store_true",
            help="script paths relative to the output directory (flags.txt's own), so that the directory can be "
            "moved or committed; iree-compile resolves them against its working directory, so run it from "
            "there (cd DIR && iree-compile $(cat flags.txt) ../payload.mlir) or pass the file to "
            "tdsl compile --flags-file, which resolves them against the file's directory",
        )


def verbosity_parent(top: bool) -> CliParser:
    """-v / -q, accepted before the command (tdsl -v compile) and after it."""
    parent = CliParser(add_help=False)
    group = parent.add_mutually_exclusive_group()
    default_v: int | str = 0 if top else argparse.SUPPRESS
    default_q: bool | str = False if top else argparse.SUPPRESS
    group.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=default_v,
        help="more detail: every rule that matched nothing, the iree-compile flags",
    )
    group.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=default_q,
        help="no progress bars, no warnings (errors still print)",
    )
    return parent
