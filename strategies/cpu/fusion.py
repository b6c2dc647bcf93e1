"""Fusion strategies for llvm-cpu: what to do so that a matmul's consumers share its dispatch.

``head_split_fusion`` — a matmul whose result is reshaped and then read through a permuted
map (BERT/MiniLM's head split: ``(s, h*d) -> (s, h, d) -> (h, s, d)`` + bias). IREE 3.13
already interchanges a 2-D transposed consumer so that it reads the matmul result through
the identity map (1024^3 matmul + transposed add: one dispatch by default), but the
``tensor.expand_shape`` between them blocks fusion: 2 dispatches by default and with data
tiling. The rules: generalize the matmul and fold the reshape into it
(``propagate_reshapes``; the matmul then yields ``(s, h, d)``), interchange the consumer so
it reads that through the identity map (``consumer_interchange``), and give the fused
``(s, h, d, k)`` contraction register tiles from the ISA table (IREE picks a 1x8x8 vector
tile for it, 3x slower than the unfused default on 128x768x768; with 8x1x16 it is 1.4x
faster than the default, measured with ``tdsl bench`` here).

A transpose that feeds a pack and has another consumer (e.g. it is also returned) needs no
rule: the packing strategies never fold a transpose into a pack themselves, and IREE 3.13
folds it only into the pack's own copy (the transpose stays a dispatch of its own for the
other use); tests/test_cpu_fusion.py pins that such programs compile and stay correct.
"""

from __future__ import annotations

from math import prod
from typing import Sequence

from tdsl import AllOf, ConsumerMatch, ContractionMatch, CpuLowering, DataLayout, Rule

from tdsl.targets.host import Isa

from .tiles import inner_tile


def head_split_fusion(
    name: str,
    isa: Isa,
    m: int,
    heads: Sequence[int],
    k: int,
    consumer_interchange: Sequence[int],
    types: tuple[str, str, str] = ("f32", "f32", "f32"),
    target: str = "cpu",
) -> list[Rule]:
    """Two rules for an ``m x prod(heads) x k`` matmul whose result is expanded to
    ``(m, *heads)`` and consumed through a permutation (see the module docstring).

    ``consumer_interchange`` is the consumer's loop permutation that makes it read the
    expanded result through the identity map (for ``(d1, d0, d2)``: ``[1, 0, 2]``); the
    first rule only matches a matmul whose every user is a ``tensor.expand_shape``. The codegen rule tiles
    the fused ``(m, *heads, k)`` contraction with the ISA's register tile on (m, last head
    dim) and distributes 32 rows x one head per workgroup.
    """
    lhs, rhs, out = types
    base = {"lhs_type": lhs, "rhs_type": rhs, "output_type": out, "batch": [], "m": m, "k": k}
    tile = inner_tile(isa, lhs, rhs, out)
    inner = heads[-1]
    m0 = 8 if m % 8 == 0 else tile.m0
    n0 = min(tile.n0, inner)
    outer = [1] * (len(heads) - 1)
    return [
        Rule(
            target=target,
            # Only matmuls whose result is reshaped: a same-shape matmul without the head
            # split (BERT's output projection) has other consumers and stays untouched.
            match=AllOf(
                matchers=[
                    ContractionMatch.model_validate({**base, "n": prod(heads)}),
                    ConsumerMatch(names="tensor.expand_shape"),
                ]
            ),
            strategy=DataLayout(
                name=f"{name}_fuse",
                generalize=True,
                propagate_reshapes=True,
                consumer_interchange=tuple(consumer_interchange),
            ),
        ),
        Rule(
            target=target,
            match=ContractionMatch.model_validate({**base, "n": list(heads)}),
            strategy=CpuLowering(
                name=f"{name}_tiles",
                distribution=[min(32, m), *outer, inner, 0],
                vector_common_parallel=[m0, *outer, n0, 0],
                vector_reduction=[0, *([0] * len(outer)), 0, 1],
            ),
        ),
    ]
