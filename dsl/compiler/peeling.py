"""Which ops of a configured program IREE peels (:attr:`tdsl.CpuTarget.peel_vector_loops`):
a root op (one with a ``distribution`` level) in a dispatch whose translation_info has
``enable_loop_peeling``, with a loop its vector tile does not divide. Only there does
peeling change the code (where every tile divides its loop the build is the same). Reads
the ``executable-configurations`` IR; emits nothing.
"""

from __future__ import annotations

from .. import bindings

PEELING_KNOB = "peel_vector_loops"
"""The name the op listing gives the knob where it covers a dispatch."""


def odd_loops(op: bindings.LinalgOp) -> tuple[int, ...]:
    """The loops of ``op`` whose vector tile (``vector_common_parallel`` or
    ``vector_reduction``) does not divide the tile it splits (the ``distribution`` tile, or
    the whole loop where that is 0); () without an iree_cpu config with a distribution level."""
    config = op.values.get("lowering_config")
    if not isinstance(config, bindings.LoweringConfig):
        return ()
    fields = config.fields
    distribution = _sizes(fields.get("distribution"))
    if not distribution or len(distribution) != len(op.loop_sizes):
        return ()
    levels = [_sizes(fields.get(level)) for level in ("vector_common_parallel", "vector_reduction")]
    odd = []
    for i, size in enumerate(op.loop_sizes):
        outer = distribution[i] or size
        vector = max((level[i] for level in levels if len(level) == len(distribution)), default=0)
        if vector and outer > 0 and outer % vector:
            odd.append(i)
    return tuple(odd)


def peeled_ops(configured: str) -> list[bindings.LinalgOp]:
    """The root ops of ``configured`` (executable-configurations IR) that IREE peels."""
    peeled = {
        op.function
        for op in bindings.walk(configured)
        if op.name == "func.func"
        and isinstance(info := op.values.get("translation_info"), bindings.TranslationInfo)
        and info.configuration
        and "enable_loop_peeling" in info.configuration
    }
    return [op for op in bindings.linalg_ops(configured) if op.function in peeled and odd_loops(op)]


def _sizes(value: object) -> tuple[int, ...]:
    """A level's sizes (scalable sizes, written as lists, count as 0: never peeled)."""
    if not isinstance(value, (list, tuple)):
        return ()
    return tuple(v if isinstance(v, int) and not isinstance(v, bool) else 0 for v in value)
