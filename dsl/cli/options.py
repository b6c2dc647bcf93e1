"""What the commands read from their parsed arguments (compile options, verbosity and
progress, the payload as a program, ``--inputs``), the output-directory check, and how
they print a --json report or a warning."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Sequence

from ..compiler.flags import check_flag, read_flags_file
from ..compiler.options import CompileOptions
from ..compiler.progress import NO_PROGRESS, Progress, RichProgress
from ..errors import ArgumentError, OutputError
from ..measure.machine import json_header
from .exits import os_reason

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..programs.program import Program


def _nearest_existing(path: Path) -> Path:
    parent = path
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    return parent


def check_output_dir(path: Path, what: str) -> None:
    """An output directory: an existing directory, or creatable under a writable one."""
    if path.exists() and not path.is_dir():
        raise OutputError(f"{what} {str(path)!r}: expected a directory, received an existing file")
    existing = _nearest_existing(path)
    if not existing.is_dir():
        raise OutputError(f"{what} {str(path)!r}: {str(existing)!r} is a file, not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise OutputError(f"{what} {str(path)!r}: the directory {str(existing)!r} is not writable")


def extra_flags(args: argparse.Namespace) -> list[str]:
    """The flags of ``--flags-file`` (paths resolved against the file's directory), then
    those of ``--iree-flag``, in order: on the command line the last occurrence wins."""
    flags: list[str] = []
    for path in getattr(args, "flags_file", None) or ():
        flags += read_flags_file(path)
    return flags + [check_flag(f) for f in getattr(args, "iree_flag", None) or ()]


def compile_options(args: argparse.Namespace) -> CompileOptions:
    """``--timeout``, ``--memory-gb``, the extra flags (:func:`extra_flags`) and
    ``--no-serial-loading`` as one value."""
    return CompileOptions(
        timeout_s=args.timeout,
        memory_gb=args.memory_gb,
        extra_flags=tuple(extra_flags(args)),
        serial_loading=not getattr(args, "no_serial_loading", False),
    )


def verbosity(args: argparse.Namespace) -> int:
    """-1 quiet, 0 normal, 1+ verbose."""
    return -1 if getattr(args, "quiet", False) else int(getattr(args, "verbose", 0) or 0)


def progress_bars(args: argparse.Namespace) -> Progress:
    """Progress bars on a terminal (stderr), unless -q."""
    if verbosity(args) < 0 or not sys.stderr.isatty() or os.environ.get("TERM") == "dumb":
        return NO_PROGRESS
    return RichProgress()


def print_json(data: Mapping[str, object]) -> None:
    """A --json report: schema version, tdsl and IREE versions and the machine first."""
    print(json.dumps({**json_header(), **data}, indent=2))


def warn(message: str, args: argparse.Namespace) -> None:
    if verbosity(args) >= 0:
        print(f"tdsl: warning: {message}", file=sys.stderr)


READY_SPEC = "auto()"
"""``--strategies auto()``: the ready set of the target's kind instead of a file."""


def resolve_ready_spec(args: argparse.Namespace) -> None:
    """Replaces ``args.strategies == "auto()"`` (when no file has that name) by the ready set
    of ``--target``'s kind (:func:`tdsl.strategies.cpu.auto` on a CPU target)."""
    spec = getattr(args, "strategies", None)
    if spec != READY_SPEC or Path(spec).exists():
        return
    from ..compiler.compile import default_target
    from ..strategies.ready import READY_SETS, ready_set
    from ..targets import CpuTarget

    target = default_target(getattr(args, "target", None) or CpuTarget.default_name)
    found = ready_set(target)
    if found is None:
        raise ArgumentError(
            f"--strategies {READY_SPEC}: expected a target whose kind has a ready set ({', '.join(sorted(READY_SETS))}), "
            f"received {target.name!r} ({target.kind})"
        )
    args.strategies = found


def program_of_args(args: argparse.Namespace, dynamic: bool = False) -> Program:
    """The payload of a compile/run/bench/ops command as a loaded program (``dynamic``: one
    only compiled and listed, whose dynamic dimensions may stay)."""
    from ..programs.load import parse_dims, program_of

    return program_of(
        args.payload, parse_dims(args.dim), args.weights_seed, getattr(args, "parameters", []), dynamic=dynamic
    )


def load_inputs(paths: Sequence[Path]) -> list[npt.NDArray[np.generic]]:
    """The arrays of ``--inputs``: each an existing ``.npy`` file (no pickles)."""
    import numpy as np

    arrays = []
    for path in paths:
        if path.is_dir():
            raise ArgumentError(f"--inputs {str(path)!r}: expected a .npy file, received a directory")
        if not path.is_file():
            raise ArgumentError(f"--inputs {str(path)!r}: the file does not exist")
        try:
            array = np.load(path, allow_pickle=False)
        except OSError as err:
            raise ArgumentError(f"--inputs {str(path)!r}: cannot be read: {os_reason(err)}") from None
        except (ValueError, EOFError) as err:
            detail = " ".join(str(err).split())
            raise ArgumentError(
                f"--inputs {str(path)!r}: expected a .npy array file (numpy.save), received other data ({detail})"
            ) from None
        if not isinstance(array, np.ndarray):
            if hasattr(array, "close"):
                array.close()
            raise ArgumentError(f"--inputs {str(path)!r}: expected a .npy array file, received a .npz archive")
        arrays.append(array)
    return arrays
