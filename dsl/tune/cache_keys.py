"""What the tuning cache is keyed by: canonical JSON and its hash, the key of a compiled
artifact (:class:`ArtifactKey`, no machine) and of the machine a timing was taken on
(:class:`MachineKey`), and what it holds: a build read back (:class:`CachedBuild`) and its
summary, a numerics verdict, the store's counts."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields
from typing import TypedDict

from ..compiler.hsaco import KernelJson
from ..measure.machine import machine

BASELINE_CANDIDATE = "baseline"
"""The ``candidate_hash`` of a build with no strategy (the compiler's default)."""


def _plain(value: object, where: str) -> object:
    """``value`` with tuples as lists; raises :class:`TypeError` for anything but plain data."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(item, f"{where}[{index}]") for index, item in enumerate(value)]
    if isinstance(value, dict):
        result = {}
        for name, item in value.items():
            if not isinstance(name, str):
                raise TypeError(
                    f"canonical_json: expected str dict keys, received {type(name).__name__} key {name!r} at {where}"
                )
            result[name] = _plain(item, f"{where}.{name}")
        return result
    raise TypeError(
        "canonical_json: expected plain data (dict with str keys, list, tuple, str, int, float, "
        f"bool, None), received {type(value).__name__} at {where}"
    )


def canonical_json(value: object) -> str:
    """The canonical JSON text of plain data: sorted keys, no whitespace, ASCII only, tuples
    as lists. Raises :class:`TypeError` for other types and for dict keys that are not str."""
    return json.dumps(_plain(value, "$"), sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def canonical_hash(value: object) -> str:
    """The sha256 hex digest of ``value``: bytes and str (as UTF-8) are hashed as they are,
    anything else as its :func:`canonical_json`. A str equal to another value's canonical
    JSON therefore shares its hash: hash one kind of value per key field."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
    elif isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
    else:
        data = canonical_json(value).encode("ascii")
    return hashlib.sha256(data).hexdigest()


def _check_fields(instance: ArtifactKey | MachineKey) -> None:
    for spec in fields(instance):
        value = getattr(instance, spec.name)
        wanted = int if spec.type in ("int", int) else str
        if not isinstance(value, wanted) or isinstance(value, bool):
            raise TypeError(
                f"{type(instance).__name__}.{spec.name}: expected {wanted.__name__}, received {type(value).__name__} {value!r}"
            )


@dataclass(frozen=True)
class ArtifactKey:
    """What a compiled artifact depends on. It names no machine, so an artifact may be
    shared across machines; the target's flags carry the CPU features or GPU arch."""

    iree_version: str
    target: str
    """The target's name, e.g. ``cpu`` or ``gfx942``."""
    target_flags: str
    """Canonical text of the target's flags (CPU features, GPU arch)."""
    source_hash: str
    """:func:`canonical_hash` of the dispatch or program source."""
    candidate_hash: str
    """:func:`canonical_hash` of the candidate's strategy data; :data:`BASELINE_CANDIDATE`
    (or ``""``) for a build without a strategy."""
    flags_hash: str
    """:func:`canonical_hash` of the extra compile flags."""
    schema_version: int

    def __post_init__(self) -> None:
        _check_fields(self)

    def digest(self) -> str:
        """One stable sha256 over every field."""
        return canonical_hash({"artifact_key": asdict(self)})


@dataclass(frozen=True)
class MachineKey:
    """The machine a timing was taken on; timings are only reused for an equal key."""

    cpu_model: str
    isa: str
    cores: int
    device: str = ""
    """The IREE device, e.g. ``local-task`` or ``hip://0``."""

    def __post_init__(self) -> None:
        _check_fields(self)

    @classmethod
    def here(cls, device: str = "local-task") -> MachineKey:
        """This machine (:func:`tdsl.iree.machine.machine`) with ``device``."""
        found = machine()
        return cls(cpu_model=str(found["cpu"]), isa=str(found["isa"]), cores=int(found["cores"] or 0), device=device)

    def digest(self) -> str:
        """One stable sha256 over every field."""
        return canonical_hash({"machine_key": asdict(self)})


class BuildSummary(TypedDict, total=False):
    """What a tuner keeps of a compile report (:func:`tdsl.tune.executor.report_summary`;
    empty for a build that failed)."""

    compile_seconds: float
    executables: int
    launches: int | None
    launches_at_load: int
    rules: int
    rules_applied: int
    unmatched: list[int]
    pipelines: dict[str, int]
    warnings: list[str]
    rule_dispatches: dict[str, list[str]]
    kernels: list[KernelJson]


class Verdict(TypedDict, total=False):
    """A numerics verdict: whether a set's outputs matched the reference build's, with each
    comparison; the tuner adds what it checked, dropped or fell back to."""

    ok: bool
    reference: str
    comparisons: list[dict[str, object]]
    checked: bool
    dropped: list[str]
    fell_back: str
    instead_of: str


class CacheStats(TypedDict):
    """A store's path and counts, and one connection's ``get_build`` hits and misses."""

    path: str
    builds: int
    failed_builds: int
    samples: int
    failed_samples: int
    verdicts: int
    machines: int
    build_hits: int
    build_misses: int


@dataclass(frozen=True)
class CachedBuild:
    """A build found in the cache: the artifact, or ``None`` and the compiler's error."""

    vmfb: bytes | None
    error: str
    seconds: float
    """How long the compile took when it ran."""
    report: BuildSummary
    created: float
    """When it was stored (seconds since the epoch)."""

    @property
    def ok(self) -> bool:
        """The compile succeeded: there is an artifact and no error."""
        return self.vmfb is not None and not self.error
