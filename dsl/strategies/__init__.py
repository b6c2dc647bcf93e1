"""Ready strategies, per target: tdsl.strategies.cpu and tdsl.strategies.gpu. Importing
this package registers the ready tuning spaces with :mod:`tdsl.tune.ready`."""

from .cpu import tuning as _cpu_tuning  # noqa: F401  (registers the CPU spaces)
from .gpu import tuning as _gpu_tuning  # noqa: F401  (registers the gfx942 spaces)
