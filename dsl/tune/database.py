"""Where a tuning keeps what it built and measured: the :class:`Database` protocol.

:class:`tdsl.tune.cache.TuneCache` (SQLite, shared by successive and concurrent runs) is the
implementation; a tuner reads and writes only through these methods. Builds are keyed by an
:class:`~tdsl.tune.cache_keys.ArtifactKey` (no machine: shared across machines), samples and
profiles also by a :class:`~tdsl.tune.cache_keys.MachineKey` and the measurement setup.
"""

from __future__ import annotations

from typing import Protocol, Sequence

from ..measure.dispatch_profile import DispatchTime
from .cache_keys import ArtifactKey, BuildSummary, CachedBuild, CacheStats, MachineKey, Verdict


class Database(Protocol):
    """Builds, timing samples, per-dispatch profiles and numerics verdicts of a tuning."""

    def get_build(self, key: ArtifactKey) -> CachedBuild | None:
        """The build stored for ``key``, or None."""
        ...

    def put_build(self, key: ArtifactKey, vmfb: bytes | None, error: str, seconds: float, report: BuildSummary) -> None:
        """Stores the build of ``key`` (a failed one: ``vmfb`` None and its ``error``)."""
        ...

    def samples(self, key: ArtifactKey, machine: MachineKey, setup: str) -> list[float]:
        """The times of ``key`` on exactly this ``machine`` and ``setup``, oldest first."""
        ...

    def add_samples(
        self,
        key: ArtifactKey,
        machine: MachineKey,
        setup: str,
        seconds: Sequence[float | None],
        errors: Sequence[str] | None = None,
    ) -> None:
        """Appends samples (a None entry: a failed run, ``errors`` says why)."""
        ...

    def get_profile(self, key: ArtifactKey, machine: MachineKey, setup: str) -> dict[str, DispatchTime] | None:
        """The per-dispatch profile stored for ``key`` on this ``machine`` and ``setup``, or None."""
        ...

    def put_profile(self, key: ArtifactKey, machine: MachineKey, setup: str, times: dict[str, DispatchTime]) -> None:
        """Stores the per-dispatch profile of ``key``."""
        ...

    def get_verdict(self, key: ArtifactKey, reference_key_digest: str) -> Verdict | None:
        """The numerics verdict of ``key`` against that reference, or None."""
        ...

    def put_verdict(self, key: ArtifactKey, reference_key_digest: str, verdict: Verdict) -> None:
        """Stores the numerics verdict of ``key`` against that reference."""
        ...

    def stats(self) -> CacheStats:
        """The store's path and counts (for the report)."""
        ...

    def close(self) -> None: ...
