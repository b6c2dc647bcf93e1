"""A batch-1 batch_matmul (ONNX MatMul of a 3-D activation by a 2-D weight) is a matmul:
``batch=[1]`` selects it, ``batch={"one_of": [[], [1]]}`` selects it and the plain matmul
alike, and neither selects a real batch. ``DataLayout(fold_unit_dims=True)`` folds that batch
away so that the op packs as a 2-D matmul."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tdsl import ContractionMatch, CpuTarget, DataLayout, PackGreedily, PackTranspose, Rule, StrategySet, compile, run
from tdsl.errors import StrategyError

PAYLOAD = Path(__file__).resolve().parent.parent / "payloads" / "cpu" / "unit_batch.mlir"


@pytest.mark.compile
@pytest.mark.parametrize(
    ("batch", "functions"), [([1], ("bmm",)), ([], ("mm",)), ({"one_of": [[], [1]]}, ("bmm", "mm"))]
)
def test_unit_batch_is_matched_either_way(batch: object, functions: tuple[str, ...]) -> None:
    match = ContractionMatch.model_validate(
        {"lhs_type": "f32", "rhs_type": "f32", "output_type": "f32", "batch": batch, "m": 128, "n": 384, "k": 256}
    )
    strategies = StrategySet(
        name="unit",
        targets=[CpuTarget()],
        rules=[Rule(target="cpu", match=match, strategy=DataLayout(name="g", generalize=True))],
    )
    report = compile(PAYLOAD, strategies, "cpu")
    assert tuple(sorted(report.rules[0].functions)) == functions


def _folded(batch: object = (1,), **sizes: object) -> StrategySet:
    """A rule that folds the unit batch of the 1x128x384x256 batch matmul and packs it 8x32x1
    for linalg.mmt4d (the RHS pack's outer dims transposed: mk_kn)."""
    groups = {"m": [128], "n": [384], "k": [256]} | sizes
    match = ContractionMatch.model_validate(
        {
            "lhs_type": "f32",
            "rhs_type": "f32",
            "output_type": "f32",
            "batch": list(batch),
            "operand_layout": "mk_kn",
            **groups,
        }
    )
    layout = DataLayout(
        name="fold",
        generalize=True,
        fold_unit_dims=True,
        pack=PackGreedily(matmul_packed_sizes=[8, 32, 1]),
        pack_transposes=[PackTranspose(operand="rhs", outer_perm=[1, 0])],
        specialize=True,
    )
    return StrategySet(
        name="folded", targets=[CpuTarget(ukernels="none")], rules=[Rule(target="cpu", match=match, strategy=layout)]
    )


@pytest.mark.compile
def test_a_folded_unit_batch_packs_as_a_matmul_and_computes_the_same() -> None:
    """fold_unit_dims: the batch-1 batch_matmul loses its batch and packs as a 2-D matmul, a
    linalg.mmt4d dispatch (a packed batched generic would lower untiled); the plain matmul and
    the batch of 3 are left alone, and the numbers are IREE default's."""
    report = compile(PAYLOAD, _folded(), "cpu", strict=True)
    assert report.rules[0].functions == ("bmm",)
    [dispatch] = [d for d in report.dispatches if d.name in report.rules[0].dispatches]
    assert "linalg.mmt4d" in dispatch.compute_ops and "Mmt4dTilingExpert" in (dispatch.pipeline or "")
    assert not any("mmt4d" in d.name for d in report.dispatches if d.name not in report.rules[0].dispatches)
    checked = run(PAYLOAD, _folded(), "cpu")
    assert checked.ok and {f.function for f in checked.functions} == {"bmm", "mm", "bmm3"}


def test_folding_needs_a_generic_and_known_loops() -> None:
    """One line each: the fold acts on a linalg.generic, does not mix with an interchange of
    the unfolded loops, and needs a matcher that fixes a batch of 1 and every other size."""
    with pytest.raises(StrategyError, match="f.generalize: expected True when fold_unit_dims is set"):
        DataLayout(name="f", fold_unit_dims=True, pack=PackGreedily(matmul_packed_sizes=[8, 32, 1]))
    with pytest.raises(StrategyError, match="f.interchange: expected None when fold_unit_dims is set"):
        DataLayout(name="f", generalize=True, fold_unit_dims=True, interchange=[0, 1, 3, 2])
    for batch, sizes, found in (
        ((3,), {}, "loop sizes [3, 128, 384, 256]"),
        ((1,), {"m": None}, "open sizes"),
        ((1,), {"k": [1]}, "loop sizes [1, 128, 384, 1]"),
    ):
        with pytest.raises(
            StrategyError,
            match=r"fold_unit_dims: expected a rule whose contraction matcher fixes every loop size.*received "
            + re.escape(found),
        ):
            _folded(batch, **sizes)


CHAIN = PAYLOAD.with_name("unit_batch_chain.mlir")


def _chain_rule(name: str, n: int, k: int, **layout: object) -> Rule:
    """A rule for one batch-1 batch matmul of CHAIN (1x64xK by 1xKxN): its unit batch folded,
    the RHS's outer dims transposed (mk_kn), packed as ``layout`` says."""
    match = ContractionMatch(
        lhs_type="f32", rhs_type="f32", output_type="f32", operand_layout="mk_kn", batch=[1], m=[64], n=[n], k=[k]
    )
    strategy = DataLayout(
        name=name,
        generalize=True,
        fold_unit_dims=True,
        pack_transposes=[PackTranspose(operand="rhs", outer_perm=[1, 0])],
        **layout,
    )
    return Rule(target="cpu", match=match, strategy=strategy)


@pytest.mark.compile
def test_every_folding_rule_of_a_set_applies() -> None:
    """Two fold_unit_dims rules in one function (an exported MLP's two batch-1 matmuls): the
    first rule's folding rewrites the second's op too, and the second still packs it (it
    once matched nothing after the first, silently, on a real BERT), with IREE default's
    numbers."""
    panels = {"pack": PackGreedily(matmul_packed_sizes=[0, 8, 0]), "lower_unpack": True}
    strategies = StrategySet(
        name="mlp",
        targets=[CpuTarget()],
        rules=[_chain_rule("up", 512, 256, **panels), _chain_rule("down", 256, 512, **panels)],
    )
    report = compile(CHAIN, strategies, "cpu", strict=True)
    assert [len(r.dispatches) for r in report.rules] == [1, 1]
    assert report.rules[0].dispatches != report.rules[1].dispatches
    assert run(CHAIN, strategies, "cpu").ok


@pytest.mark.compile
def test_the_lhs_pack_tiles_reach_a_pack_alone_in_its_dispatch_only() -> None:
    """Both matmuls of the MLP packed 4x16 for linalg.mmt4d: the second's LHS pack is fused
    after the first's unpack and relu (as BERT's FFN-down pack after the FFN-up's unpack and
    GELU, where the pack's tiles gave the fused ops 16 KiB vectors and the dispatch did not
    compile). The ready library's LHS pack rule (ProducerMatch: read from the dispatch's
    input) configures the lone pack only, and the set runs with IREE default's numbers."""
    from tdsl.strategies.cpu.blocking import lhs_pack_rule
    from tdsl.strategies.cpu.tiles import InnerTile

    mmt4d = {"pack": PackGreedily(matmul_packed_sizes=[4, 16, 1]), "specialize": True}
    pack_rule = lhs_pack_rule("lhs_pack", InnerTile(4, 16, 1), "f32")
    strategies = StrategySet(
        name="mlp",
        targets=[CpuTarget(ukernels="none")],
        rules=[_chain_rule("up", 512, 256, **mmt4d), _chain_rule("down", 256, 512, **mmt4d), pack_rule],
    )
    report = compile(CHAIN, strategies, "cpu", strict=True)
    with_packs = [d for d in report.dispatches if "linalg.pack" in d.compute_ops]
    alone = [d.name for d in with_packs if d.compute_ops == ("linalg.pack",)]
    fused = [d.name for d in with_packs if d.compute_ops != ("linalg.pack",)]
    assert fused and all("linalg.unpack" in d.compute_ops for d in with_packs if d.name in fused), [
        (d.name, d.compute_ops) for d in with_packs
    ]
    configured = report.rules[2].dispatches
    assert configured and set(configured) <= set(alone)  # the first matmul's LHS pack, not the fused one
    assert run(CHAIN, strategies, "cpu").ok
