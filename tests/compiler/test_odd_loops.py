"""Which root ops peeling changes: a vector tile that does not divide the tile it splits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tdsl import bindings
from tdsl.compiler.peeling import odd_loops


def _op(sizes: tuple[int, ...], **levels: tuple[object, ...]) -> bindings.LinalgOp:
    config = bindings.LoweringConfig("iree_cpu", dict(levels), "#iree_cpu.lowering_config<..>")  # type: ignore[arg-type]
    iterators = ("parallel",) * (len(sizes) - 1) + ("reduction",)
    return bindings.LinalgOp(
        "linalg.generic", "f", "loc", (), sizes, iterators, "other", {}, values={"lowering_config": config}
    )


@pytest.mark.parametrize(
    ("sizes", "levels", "odd"),
    [
        # IREE 3.13's softmax root over 6x500x500 on AVX2: 25 rows per workgroup, 8-wide vectors.
        ((6, 500, 500), {"distribution": (6, 25, 0), "vector_common_parallel": (1, 8, 0)}, (1,)),
        ((6, 500, 500), {"distribution": (6, 25, 0), "vector_reduction": (0, 0, 8)}, (2,)),
        ((6, 512, 512), {"distribution": (6, 32, 0), "vector_common_parallel": (1, 8, 0)}, ()),
        ((6, 512, 512), {"distribution": (6, 32, 0), "vector_reduction": (0, 0, 8)}, ()),
        # A scalable size (a list) is never peeled; no distribution level: not a root.
        ((6, 500, 500), {"distribution": (6, 25, 0), "vector_reduction": (0, 0, (8,))}, ()),
        ((6, 500, 500), {"vector_reduction": (0, 0, 8)}, ()),
    ],
)
def test_odd_loops(sizes: tuple[int, ...], levels: dict[str, tuple[object, ...]], odd: tuple[int, ...]) -> None:
    assert odd_loops(_op(sizes, **levels)) == odd


@given(size=st.integers(1, 4096), vector=st.sampled_from([4, 8, 16]), tile=st.integers(0, 64))
def test_a_loop_is_odd_exactly_where_its_vector_does_not_divide_its_tile(size: int, vector: int, tile: int) -> None:
    op = _op((size,), distribution=(tile,), vector_reduction=(vector,))
    assert odd_loops(op) == (() if (tile or size) % vector == 0 else (0,))
