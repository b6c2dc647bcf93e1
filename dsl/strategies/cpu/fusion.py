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

``head_transpose_fusion`` — the same head split as exporters write it (PyTorch ->
ONNX -> iree-import-onnx): ``linalg.matmul`` / batch-1 ``linalg.batch_matmul`` -> bias add
(``linalg.generic``) -> ``tensor.expand_shape`` -> a named ``linalg.transpose``. One rule
per head layout and rank selects the transposes by their permutation (a dag matcher) and
generalizes only the contraction of each head-split chain they read
(``DataLayout.fuse_head_split``); IREE 3.13 then folds the reshape into it and puts the bias
add and the transpose in its dispatch. No pattern runs on the function, so the
contractions of other chains (P.V, the output projection, a layout not selected) stay as
they are. By default it fuses only the layouts measured to win on the ISA and build
(``HEAD_FUSION``); on AVX-512 that is none: with data tiling a fused Q/V projection falls
off data tiling (bert 0.75x) and a fused K projection ties, and without it the fusion saves
launches but no time. ``layouts=`` opts in. GPT-2's fused QKV projection (a slice between
bias add and reshape) is no such chain.

A transpose that feeds a pack and has another consumer (e.g. it is also returned) needs no
rule: the packing strategies never fold a transpose into a pack themselves, and IREE 3.13
folds it only into the pack's own copy (the transpose stays a dispatch of its own for the
other use); tests/strategies/test_cpu_fusion.py pins that such programs compile and stay correct.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Literal, Sequence

from ...model.all_of import AllOf
from ...model.layout import DataLayout
from ...model.lowering import CpuLowering
from ...model.matchers import ConsumerMatch, ContractionMatch, DagMatch
from ...sets.strategy_set import Rule
from ...targets import CpuTarget
from ...targets.host import Isa, detect_isa
from .tiles import inner_tile


def head_split_fusion(
    name: str,
    isa: Isa,
    m: int,
    heads: Sequence[int],
    k: int,
    consumer_interchange: Sequence[int],
    types: tuple[str, str, str] = ("f32", "f32", "f32"),
    target: str = CpuTarget.default_name,
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


HeadLayout = Literal["hsd", "hds"]
"""Where a head split's transpose puts the dims of ``(seq, heads, head_dim)``: ``hsd``
(heads, seq, head_dim: queries and values, ``[0, 2, 1, 3]`` after a batch dim) or ``hds``
(heads, head_dim, seq: transposed keys, ``[0, 2, 3, 1]``)."""

HEAD_LAYOUTS: tuple[HeadLayout, ...] = ("hsd", "hds")

HEAD_PERMUTATIONS: dict[HeadLayout, dict[int, tuple[int, ...]]] = {
    "hsd": {3: (1, 0, 2), 4: (0, 2, 1, 3)},
    "hds": {3: (1, 2, 0), 4: (0, 2, 3, 1)},
}
"""The transpose permutation of each layout by rank: 3 after a 2-D ``linalg.matmul``, 4
after a batch-1 ``linalg.batch_matmul`` (its batch dim stays first)."""


@dataclass(frozen=True)
class HeadFusionChoices:
    """The layouts ``head_transpose_fusion`` fuses by default on one ISA, with IREE data
    tiling (``--iree-opt-data-tiling``, what ``auto()`` uses on AVX-512) and without it;
    ``evidence`` gives the figures."""

    data_tiling: tuple[HeadLayout, ...]
    default: tuple[HeadLayout, ...]
    evidence: tuple[str, ...]


HEAD_FUSION: dict[Isa, HeadFusionChoices] = {
    "avx512": HeadFusionChoices(
        data_tiling=(),
        default=(),
        evidence=(
            "with data tiling (auto()): no layout. examples/models/bert (2 layers, hidden 256, 4 heads, seq 64), "
            "AMD EPYC Zen 5, 1 thread, medians of 15 interleaved rounds (python benchmarks/head_split.py): auto() "
            "1.183 ms, 50 launches per call (+13 at load); + hsd 1.583 ms (0.75x, 46 + 9): a fused Q/V projection "
            "has two n dims (heads, head dim) around the sequence dim, so data tiling leaves it to DoubleTilingExpert "
            "and the attention matmul's pack joins its dispatch (82 and 665 us per dispatch against 53.5 us mmt4d + "
            "2-4 us transpose); + hds 1.156 ms (1.02x; 25 rounds: 0.995x with 1 thread, 1.015x with 2: a tie) and "
            "still 50 launches: the fused K projection stays mmt4d (50 us against 53.5 + 5 us) but, now 2-D, needs "
            "an LHS pack of its own; both 0.75x. With data tiling the transpose dispatch also packs Q, V and K^T "
            "for the attention matmuls, so it costs no launch of its own",
            "without data tiling (IREE default): no layout. 1.668 ms, 39 launches; + hsd 1.649 ms (1.01x; 21 rounds: "
            "1.00x; 2 threads: 0.97x), 35 launches: fewer launches, no faster; + hds 0.87x (37 launches: the fused K "
            "projection writes its result transposed, 175 us against 54 + 1.6 us per chain); both 0.89x (33)",
        ),
    ),
}
"""Measured choices per ISA; an ISA not listed fuses nothing by default (not measured)."""


def head_transpose_fusion(
    name: str = "heads",
    layouts: Sequence[HeadLayout] | None = None,
    data_tiling: bool = True,
    isa: Isa | None = None,
    element_type: str = "f32",
    target: str = CpuTarget.default_name,
) -> list[Rule]:
    """Ready-library rules (``Rule.optional``) that put exported head splits in their
    projection's dispatch: per layout of ``layouts`` and rank (3 and 4), a ``DagMatch`` of
    the ``linalg.transpose`` of ``element_type`` with that permutation and a
    ``DataLayout(fuse_head_split=True)`` named ``<name>_<layout><rank>`` (see the module
    docstring). ``layouts`` None: the measured choice of ``isa`` (this machine's when None)
    for a build with or without IREE data tiling (``data_tiling``: set it as the build does;
    ``auto()`` on AVX-512 uses it). Requires nothing of the contraction's shapes.
    """
    if layouts is None:
        choices = HEAD_FUSION.get(isa or detect_isa())
        chosen: Sequence[HeadLayout] = (
            () if choices is None else choices.data_tiling if data_tiling else choices.default
        )
    else:
        chosen = layouts
    rules = []
    for layout in chosen:
        for rank, permutation in sorted(HEAD_PERMUTATIONS[layout].items(), reverse=True):
            tensor = "tensor<" + "?x" * rank + f"{element_type}>"
            pattern = (
                f"^bb0(%in: {tensor}, %init: {tensor}):\n"
                f"  %t = linalg.transpose ins(%in : {tensor}) outs(%init : {tensor}) permutation = {list(permutation)}"
            )
            rules.append(
                Rule(
                    target=target,
                    match=DagMatch(pattern=pattern),
                    strategy=DataLayout(name=f"{name}_{layout}{rank}", fuse_head_split=True),
                    optional=True,
                )
            )
    return rules
