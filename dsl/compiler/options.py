"""What every ``iree-compile`` tdsl runs takes from its caller: :class:`CompileOptions`.

The public functions (``tdsl.compile`` / ``run`` / ``bench``) and the command line keep
their own parameters (``timeout_s=``, ``--timeout``, ...) and build one value here, checked
once; the functions below them take that value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

from ..errors import ArgumentError

DEFAULT_TIMEOUT_S = 300.0
DEFAULT_MEMORY_GB = 16.0
# The smallest --memory-gb the command line accepts. iree-compile 3.13 needs about 0.4 GiB
# of address space to start and compile a small matmul on a 2-core machine (0.26 GiB with
# --mlir-disable-threading; each extra core adds a malloc arena and a thread stack, about
# 72 MiB); below that it cannot even load libIREECompiler.so (exit 127) or abort in
# pthread_create. 1 GiB leaves room for a few more cores and a larger payload.
MIN_MEMORY_GB = 1.0


@dataclass(frozen=True)
class CompileOptions:
    """How tdsl runs ``iree-compile``: each run is killed after ``timeout_s`` seconds and
    capped at ``memory_gb`` GiB of address space; ``extra_flags`` go to every build, after
    tdsl's (the last occurrence wins); ``serial_loading=False`` leaves out
    :data:`tdsl.render.SERIAL_LOADING` (see there why it is on).

    Checked when made (:class:`~tdsl.errors.ArgumentError`): a positive, finite timeout and
    memory cap (the command line asks for at least :data:`MIN_MEMORY_GB`), flags that are
    strings starting with ``-``. ``extra_flags`` is kept as a tuple.
    """

    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_gb: float = DEFAULT_MEMORY_GB
    extra_flags: tuple[str, ...] = field(default=())
    serial_loading: bool = True

    def __post_init__(self) -> None:
        for name, value, unit in (("timeout_s", self.timeout_s, "seconds"), ("memory_gb", self.memory_gb, "GiB")):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise ArgumentError(f"{name}: expected a positive number of {unit}, received {value!r}")
        flags = flag_tuple(self.extra_flags)
        for flag in flags:
            if not isinstance(flag, str) or not flag.startswith("-"):
                raise ArgumentError(
                    f"extra_flags: expected iree-compile options such as --iree-opt-level=O3, received {flag!r}"
                )
        if not isinstance(self.serial_loading, bool):
            raise ArgumentError(f"serial_loading: expected True or False, received {self.serial_loading!r}")
        object.__setattr__(self, "extra_flags", flags)
        object.__setattr__(self, "timeout_s", float(self.timeout_s))
        object.__setattr__(self, "memory_gb", float(self.memory_gb))


def flag_tuple(flags: Sequence[str]) -> tuple[str, ...]:
    """``flags`` as a tuple; a plain string (one flag given where a list is expected) is
    refused rather than split into characters."""
    if isinstance(flags, (str, bytes)):
        raise ArgumentError(f"extra_flags: expected a sequence of iree-compile flags, received the string {flags!r}")
    return tuple(flags)


DEFAULT_OPTIONS = CompileOptions()
"""The defaults: :data:`DEFAULT_TIMEOUT_S`, :data:`DEFAULT_MEMORY_GB`, no extra flags,
serial loading on."""
