"""``auto``: a StrategySet for one CPU that applies tdsl's rules only where they measured a
win on its ISA, and leaves everything else to IREE's data tiling.

The choices per ISA and the figures behind them are in :mod:`tdsl.strategies.cpu.measured`.
On every ISA the base is IREE's best path: ``--iree-opt-data-tiling`` with IREE's mmt4d
ukernels. On top of it, where measured:

* f32 matmuls with a narrow (k, n) weight (N <= 128, K <= 1024) keep IREE default's tiles,
  pinned before data tiling, which is slower there (up to 5.6x with constant weights)
  (:func:`tdsl.strategies.cpu.packing.narrow_matmul_rule`);
* i32 x i32 -> i64 matmuls (ONNX ``MatMulInteger`` with zero points) get 4x32 K8 tiles
  pinned at the graph level (:mod:`tdsl.strategies.cpu.quantized`);
* matrix-vector products whose matrix is a runtime argument (``weights="runtime"``) get
  K-blocked tiles pinned at the graph level (data tiling would pack the whole matrix on
  every call; :func:`tdsl.strategies.cpu.packing.matvec_pin`);
* loops that IREE's vector tile does not divide (softmax, LayerNorm and mean rows of 197,
  500, 1500) are peeled, not masked (``CpuTarget.peel_vector_loops``: a program knob, IREE's
  own configurations, which changes only the dispatches with such a loop), where that won
  on the ISA;
* convolutions go through IREE's im2col rewrite (``CpuTarget.im2col_convs``) where that won
  on the ISA's measured shapes (the flag acts on every conv of the program);
* with constant weights, NCHW / NCW convolutions are computed channels-last
  (``CpuTarget.channels_last_convs``, IREE's rewrite before im2col) where that won on the
  ISA's exports: 1-D convs (which IREE's im2col does not take) and the 2-D convs im2col
  leaves; with runtime weights it measured slower and stays off;
* with constant weights, NCHW depthwise convolutions (which IREE's channels-last rewrite
  refuses) are computed channels-last by a rewrite of the program's linalg IR
  (``CpuTarget.channels_last_depthwise_convs``, :mod:`tdsl.bindings.depthwise`) where that
  won on the ISA;
* with constant weights and im2col, 1-D convolutions are computed as 2-D convolutions of unit
  height (``CpuTarget.convs_1d_as_2d``, :mod:`tdsl.bindings.conv1d`), which im2col takes,
  where that won on the ISA;
* with constant weights, f32 2-D matmuls and batch-1 batch matmuls folded into 2-D ones are
  packed at the graph level with the ISA's inner tile (the ``pack_matmuls`` rules that pack,
  the mmt4d workgroup blocking and LHS pack tiles, code generated: ``CpuLowering.ukernels``
  False) while data tiling keeps its ukernels for every other contraction (integer matmuls,
  im2col'd convolutions, attention), where that won on the ISA
  (``packed_matmuls_over_data_tiling``; on AVX2 1.07-1.25x on the zoo's transformers, a tie
  on its convolution networks);
* with those packed matmuls and constant weights, 2-D convolutions (1-D ones computed as
  2-D) are an im2col copy and a ``linalg.matmul`` before the graph-level rules, which pack
  it, in the convolution's channels-first layout (``CpuTarget.convs_as_matmuls``, channels-
  last convolutions off), where that won on the ISA;
* ``pack_matmuls=True`` (measured on AVX2 with runtime weights only) swaps data tiling for
  graph-level mmt4d packing of every 2-D matmul with the ISA's inner tile (ukernels off;
  see :mod:`tdsl.strategies.cpu.packing`), an mmt4d workgroup blocking from the L2 size
  (:mod:`tdsl.strategies.cpu.blocking`) and wider LHS pack steps. Batch-1 batch matmuls,
  which ONNX/PyTorch exports are full of, are not packed by it and fall to IREE's default.

Every rule is a ready-library rule (``Rule.optional``): finding no such op in a model is
expected and never a ``--strict`` error.
"""

from __future__ import annotations

from typing import Sequence

from ...errors import ArgumentError
from ...model.layout import DataLayout
from ...model.matchers import ContractionMatch, OpNameMatch
from ...sets.strategy_set import Rule, StrategySet
from ...targets import CpuTarget
from ...targets.host import ISA_NAMES, Caches, Isa, detect_caches, detect_isa
from .blocking import lhs_pack_rule, mmt4d_blocking
from .measured import CHOICES, IsaChoices, Weights
from .packing import SMALL_MAX, matvec_pin, narrow_matmul_rule, packing_rules
from .quantized import i64_accumulator_tiles
from .tiles import inner_tile

ELEMENT_TYPES: tuple[tuple[str, str, str], ...] = (
    ("f32", "f32", "f32"),
    ("f16", "f16", "f32"),
    ("bf16", "bf16", "f32"),
    ("i8", "i8", "i32"),
)


def auto(
    target: CpuTarget | None = None,
    isa: Isa | None = None,
    element_types: Sequence[tuple[str, str, str]] = ELEMENT_TYPES,
    name: str = "cpu_auto",
    caches: Caches | None = None,
    small_max: int | None = SMALL_MAX,
    weights: Weights = "constant",
    pack_matmuls: bool | None = None,
    im2col_convs: bool | None = None,
    channels_last_convs: bool | None = None,
    channels_last_depthwise_convs: bool | None = None,
    convs_1d_as_2d: bool | None = None,
    packed_matmuls_over_data_tiling: bool | None = None,
    convs_as_matmuls: bool | None = None,
) -> StrategySet:
    """The StrategySet described in the module docstring, for ``target`` on ``isa`` (read
    from this machine when not given).

    ``weights``: how the deployed program gets its weights (``constant``: compile-time
    constants, as exported models ship them; ``runtime``: function arguments; the
    ``pack_matmuls`` rules are the same for both, matvec tiles included).
    ``pack_matmuls`` / ``im2col_convs`` / ``channels_last_convs``: override the ISA's
    measured choice (``channels_last_convs``: IREE computes NCHW / NCW convolutions
    channels-last, :attr:`tdsl.CpuTarget.channels_last_convs`; ``channels_last_depthwise_convs``:
    depthwise ones too, :attr:`tdsl.CpuTarget.channels_last_depthwise_convs`; ``convs_1d_as_2d``: 1-D convs
    as unit-height 2-D convs, :attr:`tdsl.CpuTarget.convs_1d_as_2d`). ``packed_matmuls_over_data_tiling``:
    override the measured choice of the ``pack_matmuls`` rules for the f32 2-D and folded
    batch-1 matmuls (code generated, no ukernel), data tiling for every other contraction.
    ``convs_as_matmuls``: override the measured choice of computing 2-D convolutions as
    im2col'd matmuls those rules pack (:attr:`tdsl.CpuTarget.convs_as_matmuls`; when
    chosen, not given, the convolutions stay channels-first). ``element_types``,
    ``caches`` and ``small_max`` shape the ``pack_matmuls`` rules (see ``packing_rules``).
    """
    chosen = isa or detect_isa()
    choices = CHOICES[chosen]
    pack = choices.pack_matmuls if pack_matmuls is None else pack_matmuls
    measured_over = weights == "constant" and choices.packed_matmuls_over_data_tiling_with_constant_weights
    over_data_tiling = not pack and (
        measured_over if packed_matmuls_over_data_tiling is None else packed_matmuls_over_data_tiling
    )
    overrides = {
        "im2col_convs": im2col_convs,
        "channels_last_convs": channels_last_convs,
        "channels_last_depthwise_convs": channels_last_depthwise_convs,
        "convs_1d_as_2d": convs_1d_as_2d,
    }
    opted_in = {k for k, v in overrides.items() if v is not None}
    base = target or CpuTarget()
    conv_knobs = _conv_knobs(choices, weights, overrides)
    if convs_as_matmuls and not (pack or over_data_tiling):
        raise ArgumentError(
            "auto(convs_as_matmuls=True): expected packing rules to pack the convolutions' matmuls "
            "(pack_matmuls=True or packed_matmuls_over_data_tiling=True), received neither"
        )
    measured_convs = (
        over_data_tiling and weights == "constant" and choices.convs_as_packed_matmuls_with_constant_weights
    )
    if measured_convs if convs_as_matmuls is None else convs_as_matmuls:
        conv_knobs["convs_as_matmuls"] = True
        if channels_last_convs is None:
            conv_knobs["channels_last_convs"] = False
    if convs_as_matmuls is not None:
        opted_in.add("convs_as_matmuls")
    rules: list[Rule] = []
    if pack:
        # The conv knobs were measured with data tiling only: with packing they stay opt-ins.
        cpu = base.model_copy(
            update={
                **conv_knobs,
                **{k: bool(v) for k, v in overrides.items() if k != "im2col_convs"},
                "ukernels": "none",
                "data_tiling": False,
            }
        )
        # ukernels='none' is what the packing rules need, so it is no optional knob.
        knobs: tuple[str, ...] = tuple(conv_knobs)
        rules += _packed_matmul_rules(chosen, element_types, cpu.name, small_max, caches)
    else:
        # allow_large_vectors: IREE's data tiling refuses its own 8x8-packed attention
        # elementwise op on AVX2 (see CpuTarget.allow_large_vectors); a no-op elsewhere.
        # With packed matmuls over data tiling, batch-1 batch matmuls are folded into 2-D
        # ones first so that the packing rules take them.
        cpu = base.model_copy(
            update={
                **conv_knobs,
                "data_tiling": True,
                "allow_large_vectors": True,
                "fold_batch_matmuls": base.fold_batch_matmuls or over_data_tiling,
            }
        )
        knobs = ("data_tiling", "allow_large_vectors", "fold_batch_matmuls", *conv_knobs)
        if over_data_tiling:
            rules += _packed_matmul_rules(chosen, element_types, cpu.name, small_max, caches, over_data_tiling=True)
        rules += _data_tiling_rules(chosen, choices, weights, cpu.name)
    rules = [rule.model_copy(update={"optional": True}) for rule in rules]
    # The knobs auto() chose (not those of the user's ``target``, nor opt-ins passed here)
    # are optional: a build that fails with them is made without them, with a note.
    chosen_knobs = tuple(k for k in knobs if getattr(cpu, k) != getattr(base, k) and k not in opted_in)
    if chosen_knobs:
        cpu = cpu.model_copy(update={"ready_knobs": chosen_knobs, "ready_origin": f"auto(), {ISA_NAMES[chosen]}"})
    return StrategySet(name=name, targets=[cpu], rules=rules)


def _packed_matmul_rules(
    isa: Isa,
    element_types: Sequence[tuple[str, str, str]],
    target: str,
    small_max: int | None,
    caches: Caches | None,
    over_data_tiling: bool = False,
) -> list[Rule]:
    """Graph-level mmt4d packing of 2-D matmuls with the ISA's inner tile
    (:func:`~tdsl.strategies.cpu.packing.packing_rules`), the mmt4d workgroup blocking from
    the L2 size and the f32 LHS pack's tiles (under a target with ukernels off).
    ``over_data_tiling``: only the f32 rules that pack (the measured ones; integer and
    half-precision matmuls stay with data tiling and its ukernels, as do matrix-vector
    products and small matmuls: a codegen-time configuration of a matmul cannot stand with
    it), and the blocking and pack rules code generate their ops where the target keeps
    IREE's ukernels for data tiling (``CpuLowering.ukernels=False``)."""
    types_packed = [t for t in element_types if t == ("f32", "f32", "f32")] if over_data_tiling else element_types
    rules = [rule for types in types_packed for rule in packing_rules(isa, types, target, small_max)]
    if over_data_tiling:
        rules = [r for r in rules if isinstance(r.strategy, DataLayout) and r.strategy.pack is not None]
    tile = inner_tile(isa, "f32", "f32", "f32")
    blocking = mmt4d_blocking(f"{isa}_mmt4d_blocking", tile, caches or detect_caches())
    codegen = [Rule(target=target, match=OpNameMatch(names="linalg.mmt4d"), strategy=blocking)]
    if ("f32", "f32", "f32") in element_types:
        codegen.append(lhs_pack_rule(f"{isa}_f32_lhs_pack_tiles", tile, "f32", target))
    if over_data_tiling:
        codegen = [
            r.model_copy(update={"strategy": r.strategy.model_copy(update={"ukernels": False})}) for r in codegen
        ]
    return rules + codegen


def _data_tiling_rules(isa: Isa, choices: IsaChoices, weights: Weights, target: str) -> list[Rule]:
    """The rules measured on top of data tiling: narrow matmuls, i64-accumulating integer
    matmuls and, with runtime weights, matrix-vector products, where the ISA measured them."""
    rules: list[Rule] = []
    if choices.narrow_matmuls_off_data_tiling:
        rules.append(narrow_matmul_rule(f"{isa}_f32_narrow_matmul_tiles", ("f32", "f32", "f32"), target))
    rules += i64_accumulator_tiles(isa, target)
    if weights == "runtime" and choices.matvec_tiles_with_runtime_weights:
        rules.append(
            Rule(
                target=target,
                match=ContractionMatch(
                    lhs_type="f32", rhs_type="f32", output_type="f32", batch=[], m=1, operand_layout="mk_kn"
                ),
                strategy=matvec_pin(f"{isa}_f32_matvec_tiles", inner_tile(isa, "f32", "f32", "f32")),
            )
        )
    return rules


def _conv_knobs(choices: IsaChoices, weights: Weights, overrides: dict[str, bool | None]) -> dict[str, bool]:
    """The program knobs of convolutions and odd loops: each the ISA's measured choice (the
    channels-last and 1-D ones with constant weights only; 1-D convs as 2-D only with
    im2col), unless ``overrides`` sets it."""
    constant = weights == "constant"
    im2col = choices.im2col_convs if overrides["im2col_convs"] is None else bool(overrides["im2col_convs"])
    measured = {
        "channels_last_convs": choices.channels_last_convs_with_constant_weights and constant,
        "channels_last_depthwise_convs": choices.channels_last_depthwise_convs_with_constant_weights and constant,
        "convs_1d_as_2d": choices.convs_1d_as_2d_with_constant_weights and constant and im2col,
    }
    knobs = {"im2col_convs": im2col}
    for name, value in measured.items():
        knobs[name] = value if overrides[name] is None else bool(overrides[name])
    return {**knobs, "peel_vector_loops": choices.peel_vector_loops}
