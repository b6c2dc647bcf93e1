"""The transform-op declarations (``tdsl.render.transform_ops``): one per op, read by the
render planners and by ``tdsl import``.

* every declared op has a generator of strategies that render it (a new op without one
  fails here); each generated strategy, rendered by its kind's template and imported back,
  is the strategy it was rendered from, and its script holds the op;
* an attribute of the wrong kind is refused with the op, the attribute, what was expected
  and what was found.
"""

from __future__ import annotations

from typing import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tdsl import (
    AmdGpuTarget,
    Codegen,
    ContractionMatch,
    CpuTarget,
    DataLayout,
    Fuse,
    GpuThreads,
    MmaChain,
    OpNameMatch,
    Pack,
    PackGreedily,
    PackTranspose,
    Rule,
    StrategySet,
    TileUsingFor,
    TileUsingForall,
    VectorLowering,
    render,
)
from tdsl.bindings import Opaque
from tdsl.importer import merge, read_spec
from tdsl.model.kinds import StrategyKind
from tdsl.render.transform_ops import (
    CLEANUP_PATTERNS,
    INTERCHANGE,
    LOWER_CONTRACTION,
    PACK_GREEDILY,
    TILE_USING_FORALL,
    TRANSFORM_OPS,
    OpAttributeError,
)

Strategies = st.SearchStrategy[tuple[str, StrategyKind]]
"""(target name, strategy) pairs."""

GENERIC = OpNameMatch(names="linalg.generic")
F16_MM = ContractionMatch(lhs_type="f16", rhs_type="f16", output_type="f32", batch=[], m=256, n=256, k=256)
TARGETS = [CpuTarget(ukernels="none"), AmdGpuTarget()]  # no mmt4d ukernel under a specialized layout
SIZES = st.sampled_from([0, 1, 4, 8, 16, 32])
NONZERO = st.sampled_from([1, 4, 8, 16, 32])


def _perm(n: int) -> st.SearchStrategy[list[int]]:
    return st.permutations(list(range(n)))


@st.composite
def _pack_greedily(draw: st.DrawFn, full: bool = False) -> PackGreedily:
    sizes = [draw(NONZERO) for _ in range(3)] if full else [draw(SIZES) for _ in range(3)]
    if not any(sizes):
        sizes[draw(st.integers(0, 2))] = draw(NONZERO)
    padded = None
    if not full and draw(st.booleans()):
        padded = [0 if s else draw(SIZES) for s in sizes]
    return PackGreedily(
        matmul_packed_sizes=sizes, matmul_padded_sizes_next_multiple_of=padded, matmul_inner_dims_order=draw(_perm(3))
    )


@st.composite
def _layout(draw: st.DrawFn, **fields: object) -> tuple[str, StrategyKind]:
    return draw(st.sampled_from(["cpu", "gfx942"])), DataLayout(name="layout", **fields)


@st.composite
def _interchange(draw: st.DrawFn) -> tuple[str, StrategyKind]:
    return draw(_layout(generalize=True, interchange=draw(_perm(draw(st.integers(2, 4))))))


@st.composite
def _pack(draw: st.DrawFn) -> tuple[str, StrategyKind]:
    sizes = [draw(SIZES) for _ in range(draw(st.integers(2, 5)))]
    sizes[0] = sizes[0] or draw(NONZERO)
    return draw(_layout(pack=Pack(packed_sizes=sizes)))


@st.composite
def _pack_transpose(draw: st.DrawFn) -> tuple[str, StrategyKind]:
    operand = draw(st.sampled_from(["lhs", "rhs", "result"]))
    outer = None if operand == "result" or draw(st.booleans()) else draw(_perm(2))
    inner = draw(_perm(2)) if outer is None or draw(st.booleans()) else None
    transpose = PackTranspose(operand=operand, outer_perm=outer, inner_perm=inner)
    return draw(_layout(pack=draw(_pack_greedily(full=True)), pack_transposes=[transpose]))


@st.composite
def _lowered(draw: st.DrawFn, unpack: bool) -> tuple[str, StrategyKind]:
    pack = draw(_pack_greedily(full=True))
    return draw(_layout(pack=pack, lower_unpack=True) if unpack else _layout(pack=pack, lower_packs=True))


@st.composite
def _codegen(draw: st.DrawFn) -> tuple[str, StrategyKind]:
    """A Codegen on llvm-cpu: forall levels of sizes or thread counts, for levels with and
    without an interchange, a distributed fusion, cleanup sets and vector lowering."""
    first = _forall(draw, "block", draw(st.booleans()))
    tiling: list[TileUsingForall | TileUsingFor] = [first]
    for _ in range(draw(st.integers(1, 2))):
        sizes = [draw(SIZES) for _ in range(3)]
        sizes[2] = sizes[2] or draw(NONZERO)
        interchange = draw(_perm(3)) if draw(st.booleans()) else None
        tiling.append(TileUsingFor(tile_sizes=sizes, interchange=interchange))
    distribute = _forall(draw, "thread", False) if draw(st.booleans()) else None
    strategy = Codegen(
        name="cg",
        root="linalg.generic",
        tiling=tiling,
        fusion=[Fuse(producers=["linalg.fill"], into=[0], distribute=distribute)],
        vectorize=True,
        cleanup=draw(st.lists(st.sampled_from(sorted(CLEANUP_PATTERNS)), min_size=1, max_size=3)),
        vector_lowering=VectorLowering(
            contraction=draw(st.sampled_from(LOWER_CONTRACTION.attributes[0].cases)),
            transpose=draw(st.sampled_from(["eltwise", "llvmintr", "shuffle_1d", "shuffle_16x16"])),
        ),
    )
    return "cpu", strategy


def _forall(draw: st.DrawFn, processor: str, threads: bool) -> TileUsingForall:
    sizes = [draw(NONZERO) for _ in range(draw(st.integers(1, 2)))]
    mapping = [f"{processor}_{d}" for d in draw(st.permutations(["x", "y", "z"]))[: len(sizes)]]
    if threads:
        return TileUsingForall(num_threads=sizes, mapping=mapping)
    return TileUsingForall(tile_sizes=sizes, mapping=mapping)


@st.composite
def _gpu_codegen(draw: st.DrawFn) -> tuple[str, StrategyKind]:
    """A Codegen on gfx942: promoted operands and a thread mapping."""
    tile = draw(st.sampled_from([32, 64]))
    strategy = Codegen(
        name="cg",
        root="linalg.generic",
        tiling=[
            TileUsingForall(tile_sizes=[tile, tile], mapping=["block_y", "block_x"]),
            TileUsingFor(tile_sizes=[0, 0, 16]),
            TileUsingForall(tile_sizes=[4, 4], mapping=["thread_y", "thread_x"]),
        ],
        promote_operands=draw(st.sampled_from([[0], [1], [0, 1], [1, 0]])),
        promote_after=1,
        gpu=GpuThreads(workgroup_dims=[tile // 4, tile // 4, 1]),
    )
    return "gfx942", strategy


@st.composite
def _mfma_codegen(draw: st.DrawFn) -> tuple[str, StrategyKind]:
    tile = draw(st.sampled_from([16, 32, 64]))
    strategy = Codegen(
        name="cg",
        root="linalg.generic",
        tiling=[
            TileUsingForall(tile_sizes=[tile, tile], mapping=["block_y", "block_x"]),
            TileUsingFor(tile_sizes=[0, 0, 16]),
        ],
        gpu=GpuThreads(workgroup_dims=[64, 1, 1]),
        mma=MmaChain(intrinsic="MFMA_F32_16x16x16_F16"),
    )
    return "gfx942", strategy


EXAMPLES: dict[str, Callable[[], Strategies]] = {
    "transform.structured.generalize": lambda: _layout(generalize=True),
    "transform.structured.interchange": _interchange,
    "transform.structured.pack_greedily": lambda: _pack_greedily().flatmap(lambda p: _layout(pack=p)),
    "transform.structured.pack": _pack,
    "transform.structured.pack_transpose": _pack_transpose,
    # a pack of at most two of m, n, k: the packed op stays a generic, so an op_name matcher
    # that fixes no loops may specialize it (a full pack needs the operands' layout)
    "transform.structured.specialize": lambda: (
        _pack_greedily().filter(lambda p: len(p.packed_roles()) < 3).flatmap(lambda p: _layout(pack=p, specialize=True))
    ),
    "transform.structured.lower_pack": lambda: _lowered(unpack=False),
    "transform.structured.lower_unpack": lambda: _lowered(unpack=True),
    "transform.structured.tile_using_forall": _codegen,
    "transform.structured.tile_using_for": _codegen,
    "transform.iree.promote_operands": _gpu_codegen,
    "transform.iree.convert_to_multi_mma": _mfma_codegen,
    "transform.iree.map_nested_forall_to_gpu_threads": _gpu_codegen,
    "transform.apply_patterns.vector.lower_contraction": _codegen,
    "transform.apply_patterns.vector.lower_transpose": _codegen,
    "transform.apply_patterns.vector.lower_transfer": _codegen,
}
"""Declared op -> strategies that render it."""


def _round_trip(target: str, strategy: StrategyKind) -> tuple[str, StrategyKind]:
    """The scripts of a one-rule set and the strategy they import back into (a Codegen's
    root is read from the matcher: linalg.generic)."""
    match = F16_MM if isinstance(strategy, Codegen) and strategy.mma is not None else GENERIC
    original = StrategySet(name="ops", targets=TARGETS, rules=[Rule(target=target, match=match, strategy=strategy)])
    scripts = render(original, target).scripts
    imported = merge(
        [read_spec(s.text, f"ops.{s.injection}", target=target, targets=TARGETS) for s in scripts], TARGETS
    )
    return "\n".join(s.text for s in scripts), imported.rules[0].strategy


def test_every_declared_op_has_an_example() -> None:
    assert sorted(EXAMPLES) == sorted(TRANSFORM_OPS)


@pytest.mark.parametrize("name", sorted(TRANSFORM_OPS))
def test_a_rendered_op_imports_back_into_its_strategy(name: str) -> None:
    declared = TRANSFORM_OPS[name]

    @settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(EXAMPLES[name]())
    def check(example: tuple[str, StrategyKind]) -> None:
        target, strategy = example
        text, imported = _round_trip(target, strategy)
        assert imported == strategy
        assert f" {declared.name} " in text

    check()


def test_an_attribute_of_the_wrong_kind_is_refused() -> None:
    with pytest.raises(OpAttributeError) as err:
        PACK_GREEDILY.read({"static_matmul_packed_sizes": (8, True, 1), "matmul_inner_dims_order": (0, 1, 2)})
    assert (
        str(err.value)
        == "transform.structured.pack_greedily static_matmul_packed_sizes: a list of integers, not (8, True, 1)"
    )
    with pytest.raises(OpAttributeError, match="iterator_interchange: a list of integers, not no attribute"):
        INTERCHANGE.read({})
    with pytest.raises(OpAttributeError, match=r"mapping: a list of #gpu.block / thread / warp mappings, not \(Opaque"):
        TILE_USING_FORALL.read({"static_tile_sizes": (8,), "mapping": (Opaque("#iree_codegen.workgroup_mapping<x>"),)})
    with pytest.raises(OpAttributeError, match="lowering_strategy: one of the enum's cases, not 7"):
        LOWER_CONTRACTION.read({"lowering_strategy": 7})


def test_a_declaration_spells_and_reads_its_attributes_in_order() -> None:
    pack = PackGreedily(
        matmul_packed_sizes=[8, 0, 1],
        matmul_padded_sizes_next_multiple_of=[0, 16, 0],
        matmul_inner_dims_order=[1, 0, 2],
    )
    spelled = PACK_GREEDILY.spell(dict(pack))
    assert spelled.name == "transform.structured.pack_greedily"
    assert spelled.attributes == (
        " matmul_packed_sizes = [8, 0, 1] matmul_padded_sizes_next_multiple_of = [0, 16, 0] matmul_inner_dims_order = [1, 0, 2]"
    )
    parsed = {
        "static_matmul_packed_sizes": (8, 0, 1),
        "matmul_padded_sizes_next_multiple_of": (),
        "matmul_inner_dims_order": (1, 0, 2),
    }
    assert PACK_GREEDILY.build(PackGreedily, parsed) == PackGreedily(
        matmul_packed_sizes=[8, 0, 1], matmul_inner_dims_order=[1, 0, 2]
    )
    forall = TileUsingForall(num_threads=[2, 4], mapping=["block_y", "block_x"])
    assert (
        TILE_USING_FORALL.spell(dict(forall)).attributes
        == " num_threads [2, 4] (mapping = [#gpu.block<y>, #gpu.block<x>])"
    )
