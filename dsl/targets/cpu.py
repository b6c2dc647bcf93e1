"""The llvm-cpu target: which CPU to generate code for, and the flags that select it."""

from __future__ import annotations

import re
from typing import Callable, ClassVar, Literal, Sequence

from pydantic import field_validator, model_validator
from typing_extensions import Self

from ..errors import StrategyError
from ..model.all_of import leaves
from ..model.base import Described, StrictBool, SymbolName, problem
from ..model.codegen import Codegen, TileUsingForall
from ..model.element_types import ELEMENT_BITS
from ..model.kinds import Backend, Injection, LoopShape, MatcherKind, StrategyKind
from ..model.layout import DataLayout
from ..model.lowering import CpuLowering
from ..model.matchers import ContractionMatch, ConvolutionMatch, OpNameMatch
from .host import native_vector_bytes
from .kind import TargetKind

# IREE 3.13 refuses vectors of ``native vector bytes x this`` bytes or more
# (LLVMCPUVerifyVectorSizeLegality, --iree-llvmcpu-max-allowed-number-of-native-vectors).
MAX_NATIVE_VECTORS = 512
PARALLEL_LEVELS = ("distribution", "cache_parallel", "vector_common_parallel", "vector_inner_parallel")
REDUCTION_LEVELS = ("cache_reduction", "vector_reduction")
VECTOR_LEVELS = ("vector_common_parallel", "vector_reduction", "vector_inner_parallel")
# Pipelines whose vector.contract is the vector tile of the levels (measured with IREE 3.13
# on a 256x384x512 f32 matmul); DataTiling and Default vectorize otherwise or not at all.
VECTOR_TILED_PIPELINES = (
    "DoubleTilingExpert",
    "LinalgExtTileAndVectorize",
    "ConvTileAndDecomposeExpert",
    "Mmt4dTilingExpert",
)

# Whole-string patterns (fullmatch: ``$`` would accept a trailing newline).
_CPU_RE = re.compile(r"[A-Za-z0-9_.-]+")
_FEATURE_RE = re.compile(r"[+-][A-Za-z0-9_.-]+")


PREPROCESSING_PIPELINE = "--iree-preprocessing-pass-pipeline="
"""The flag that runs IREE passes before the preprocessing transform spec (graph-level
strategies then see their result)."""
CHANNELS_LAST_PASS = "iree-preprocessing-convert-conv-to-channels-last"
"""The pass of :attr:`CpuTarget.channels_last_convs`."""
CONVS_AS_MATMULS_PASS = "iree-global-opt-convert-conv2d-to-img2col"
"""The pass of :attr:`CpuTarget.convs_as_matmuls`."""
FOLD_BATCH_MATMULS_PASS = "iree-global-opt-convert-batch-matmul-to-matmul"
"""The pass of :attr:`CpuTarget.fold_batch_matmuls`."""
PEEL_FLAG = "--iree-llvmcpu-vector-pproc-strategy=peel"
"""The flag of :attr:`CpuTarget.peel_vector_loops`."""


class CpuTarget(TargetKind):
    """An llvm-cpu target. Emits ``--iree-hal-local-target-device-backends=llvm-cpu`` flags.

    ``cpu`` is an LLVM CPU name (``host``, ``znver4``, ``skylake-avx512``, ``generic``);
    ``features`` are LLVM feature toggles such as ``+avx512f``; ``ukernels`` selects
    ``--iree-llvmcpu-enable-ukernels`` (``none`` is required for mmt4d tiles the
    ukernel table lacks, e.g. 8x32x1 on AVX-512); ``im2col_convs`` adds
    ``--iree-global-opt-use-im2col-for-convs`` (IREE rewrites every convolution into an
    im2col + matmul during global optimization: 3x3 conv 1x56x56x64 -> 64 f32 measured
    6.5-8.4 ms vs 10.2 ms IREE default, single-threaded, on this project's AVX2 machine;
    0.53x IREE default on AVX-512); ``channels_last_convs`` runs IREE's
    ``iree-preprocessing-convert-conv-to-channels-last`` before everything else (every
    NCHW / NCW convolution as its NHWC / NWC form between transposes: measured on AVX-512,
    1 thread, with data tiling, the ResNet example 0.363 ms against 1.472 ms and a
    1-D conv stack 0.532 ms against 2.570 ms); ``fold_batch_matmuls`` runs IREE's
    batch-matmul-to-matmul rewrite before the graph-level strategies; ``data_tiling`` adds ``--iree-opt-data-tiling`` (IREE
    packs every matmul no rule pinned: its best path, and the base of ``auto()``);
    ``allow_large_vectors`` lets IREE's own configurations keep vectors its check refuses;
    ``peel_vector_loops`` has IREE peel, not mask, the loops its vector tile does not divide;
    ``channels_last_depthwise_convs`` computes NCHW depthwise convs channels-last, a rewrite
    of the program's linalg IR (:meth:`payload_rewrites`); ``convs_1d_as_2d`` computes 1-D convs
    as 2-D convs of unit height, which ``im2col_convs`` then takes (a rewrite too).

    Example::

        CpuTarget(cpu="znver4", ukernels="none")
    """

    backend: ClassVar[Backend] = Backend.LLVM_CPU
    default_name: ClassVar[str] = "cpu"
    # Named ops that are linalg.generic by the time codegen configuration runs.
    ops_gone_at_codegen: ClassVar[tuple[str, ...]] = ("linalg.conv_",)
    runs_on_host: ClassVar[bool] = True

    kind: Literal["llvm-cpu"] = "llvm-cpu"
    """The discriminator: --iree-hal-local-target-device-backends=llvm-cpu."""
    name: SymbolName = default_name
    """The target's name, which rules name in their target field."""
    cpu: str = "host"
    """--iree-llvmcpu-target-cpu: an LLVM CPU name (host, znver4, skylake-avx512, generic)."""
    features: tuple[str, ...] = ()
    """--iree-llvmcpu-target-cpu-features: LLVM feature toggles such as +avx512f."""
    ukernels: Literal["default", "none", "mmt4d", "all"] = "default"
    """--iree-llvmcpu-enable-ukernels ('none' is required for graph-level mmt4d packing)."""
    im2col_convs: StrictBool = False
    """--iree-global-opt-use-im2col-for-convs: IREE rewrites every convolution into im2col + matmul."""
    channels_last_convs: StrictBool = False
    """--iree-preprocessing-pass-pipeline running iree-preprocessing-convert-conv-to-channels-last:
    IREE computes every channels-first convolution channels-last (a later
    --iree-preprocessing-pass-pipeline among the extra flags replaces it)."""
    convs_as_matmuls: StrictBool = False
    """IREE's convert-conv2d-to-img2col before the graph-level strategies (in the
    --iree-preprocessing-pass-pipeline, after channels_last_convs' pass): every named 2-D
    convolution (depthwise ones included; the generic ones of
    ``channels_last_depthwise_convs`` are not named) is an im2col copy and a
    ``linalg.matmul`` there, so packing and panel layouts reach it (``im2col_convs`` makes
    its matmul after them). A conv's initial value (an ONNX bias) is added after a
    zero-initialized conv first, a rewrite of the program's linalg IR
    (:mod:`tdsl.bindings.conv_init`): IREE 3.13 cannot code generate a packed matmul's
    unpack into any other initial value."""
    fold_batch_matmuls: StrictBool = False
    """IREE's convert-batch-matmul-to-matmul before the graph-level strategies (in the
    --iree-preprocessing-pass-pipeline, after channels_last_convs' and convs_as_matmuls'
    passes): a batch matmul
    whose batch folds into M (a unit batch, or an RHS broadcast over the batch, as
    ``F.linear`` on ``nn.MultiheadAttention``'s ``(L, 1, E)`` query exports) is a plain
    matmul there, so packing and panel layouts (and the op listing's graph level) reach it;
    a batch-1 batch matmul becomes a 2-D matmul there too (rules for its batch-1 form no
    longer match). IREE does the same rewrite later in any case, after the graph-level
    strategies."""
    data_tiling: StrictBool = False
    """--iree-opt-data-tiling: IREE packs the matmuls no rule packed itself (its mmt4d path, with ukernels)."""
    allow_large_vectors: StrictBool = False
    """--iree-llvmcpu-fail-on-large-vector=false: IREE's own configurations may keep a vector
    of :meth:`vector_limit` bytes or more instead of failing the compile (the flag turns off
    a check, nothing else). IREE 3.13's data tiling on AVX2 fuses the gpt2_block example's
    attention mask and scale into an 8x8-packed elementwise op with a 16 KB vector, which
    its own check refuses; allowed, the model compiles, matches onnxruntime and runs in
    1.69 ms against 2.75 ms for IREE default (Zen 3, 1 thread). tdsl still refuses such
    tiles in a rule."""
    peel_vector_loops: StrictBool = False
    """--iree-llvmcpu-vector-pproc-strategy=peel: IREE's CPU configurations peel the loops whose
    size their vector tile does not divide (a main loop on whole vectors plus a scalar
    remainder) instead of masking them, IREE 3.13's choice on x86. On AVX2, which has no
    mask registers, a masked row reduction is an order of magnitude slower: softmax over
    6x500x500 f32 takes 302 ms masked against 10.7 ms peeled (12.5 ms at 6x512x512; AMD
    EPYC, AVX2, 1 thread). Acts on every dispatch IREE configures itself."""

    channels_last_depthwise_convs: StrictBool = False
    """Every static NCHW depthwise conv (``linalg.depthwise_conv_2d_nchw_chw``, ONNX ``Conv``
    with one channel per group) computed channels-last: the program is compiled to linalg
    (``--compile-to=input``) and each such op rewritten into transposes around its NHWC form
    (:mod:`tdsl.bindings.depthwise`), which IREE's channels-last rewrite refuses to do. On
    AVX2 a 56x56x144 3x3 depthwise conv takes 1.1 ms against 5.0 ms (AMD EPYC, 1 thread)."""

    convs_1d_as_2d: StrictBool = False
    """Every static 1-D conv (``linalg.conv_1d_ncw_fcw``, a 1-D ONNX ``Conv``) computed as a 2-D
    conv of unit height (:mod:`tdsl.bindings.conv1d`), a rewrite of the program's linalg IR
    like ``channels_last_depthwise_convs``: IREE's im2col rewrite takes 2-D convs only. With
    ``im2col_convs`` and data tiling on AVX2, Whisper's 384 -> 384 k3 stride-2 conv takes
    15.4 ms against 59.4 ms (AMD EPYC, 1 thread)."""

    @field_validator("cpu")
    @classmethod
    def _cpu_name(cls, value: str) -> str:
        if not _CPU_RE.fullmatch(value):
            raise problem("", "an LLVM CPU name such as 'host' or 'znver4'", value)
        return value

    @field_validator("features")
    @classmethod
    def _feature_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for i, feature in enumerate(value):
            if not _FEATURE_RE.fullmatch(feature):
                raise problem(f"[{i}]", "an LLVM feature toggle such as '+avx512f'", feature)
        return value

    @model_validator(mode="after")
    def _features_need_a_cpu(self) -> "CpuTarget":
        if self.features and self.cpu == "host":
            raise problem(
                "cpu",
                "an explicit CPU name when features are given (with 'host' plus features, "
                "iree-compile 3.13 aborts: '64-bit code requested on a subtarget that doesn't support it')",
                self.cpu,
            )
        return self

    def compile_flags(self) -> list[str]:
        """The ``iree-compile`` flags that select this target (no strategy files)."""
        flags = [
            "--iree-hal-target-device=local",
            "--iree-hal-local-target-device-backends=llvm-cpu",
            f"--iree-llvmcpu-target-cpu={self.cpu}",
        ]
        if self.features:
            flags.append("--iree-llvmcpu-target-cpu-features=" + ",".join(self.features))
        if self.ukernels != "default":
            flags.append(f"--iree-llvmcpu-enable-ukernels={self.ukernels}")
        if self.im2col_convs:
            flags.append("--iree-global-opt-use-im2col-for-convs")
        passes = [
            name
            for name, on in (
                (CHANNELS_LAST_PASS, self.channels_last_convs),
                (CONVS_AS_MATMULS_PASS, self.convs_as_matmuls),
                (FOLD_BATCH_MATMULS_PASS, self.fold_batch_matmuls),
            )
            if on
        ]
        if passes:
            flags.append(f"{PREPROCESSING_PIPELINE}builtin.module(util.func({','.join(passes)}))")
        if self.data_tiling:
            flags.append("--iree-opt-data-tiling")
        if self.allow_large_vectors:
            flags.append("--iree-llvmcpu-fail-on-large-vector=false")
        if self.peel_vector_loops:
            flags.append(PEEL_FLAG)
        return flags

    def payload_rewrites(self) -> tuple[str, ...]:
        """The rewrite knobs that are on, by name, in the order they apply
        (``channels_last_depthwise_convs``, ``convs_1d_as_2d``, ``convs_as_matmuls``)."""
        knobs = ("channels_last_depthwise_convs", "convs_1d_as_2d", "convs_as_matmuls")
        return tuple(knob for knob in knobs if getattr(self, knob))

    def vector_limit(self) -> int | None:
        """The vector size (bytes) from which IREE refuses a vector on this CPU (None:
        unknown CPU)."""
        native = native_vector_bytes(self.cpu, self.features)
        return None if native is None else native * MAX_NATIVE_VECTORS

    def baseline(self) -> Self:
        """This CPU with IREE's own defaults (ukernels, no im2col, no channels-last): the reference that
        ``tdsl bench`` and ``tdsl run`` compare strategies against."""
        return self.model_copy(
            update={
                "ukernels": "default",
                "im2col_convs": False,
                "channels_last_convs": False,
                "fold_batch_matmuls": False,
                "data_tiling": False,
                "allow_large_vectors": False,
                "peel_vector_loops": False,
                "channels_last_depthwise_convs": False,
                "convs_1d_as_2d": False,
                "convs_as_matmuls": False,
            }
        )

    def fallback_path(self) -> str:
        return "IREE's data tiling path" if self.data_tiling else super().fallback_path()

    def accepting(self, error: StrategyError) -> tuple[Self, str] | None:
        """With ``ukernels='none'`` when ``error`` is this target's refusal of a graph-level
        mmt4d under IREE's mmt4d ukernel (see :meth:`check_rules`)."""
        if self.ukernels != "none" and "ukernels" in str(error):
            why = "the CPU target needs ukernels='none' for these rules (graph-level mmt4d): imported with CpuTarget(ukernels='none')"
            return self.model_copy(update={"ukernels": "none"}), why
        return None

    def check_rules(self, rules: Sequence[tuple[int, MatcherKind, StrategyKind]], target_index: int) -> None:
        """A data_layout that specializes to ``linalg.mmt4d`` needs the graph-level mmt4d
        ops code generated: ``ukernels='none'``, or a codegen rule that configures every
        ``linalg.mmt4d`` (matched by op name alone) with ``ukernels=False`` (IREE 3.13's mmt4d
        ukernel gives wrong results on graph-level mmt4d ops: max error 29 on a 128x256x192
        f32 matmul, any inner tile; and falls to its slow generic tile on inner tiles it has
        no code for)."""
        if self.ukernels == "none" or any(_no_ukernel_mmt4d(m, s) for _, m, s in rules):
            return
        for _, _, strategy in rules:
            if isinstance(strategy, DataLayout) and strategy.specialize:
                raise problem(
                    f"targets[{target_index}].ukernels",
                    "'none' when a data_layout specializes to linalg.mmt4d and no rule configures "
                    "linalg.mmt4d with ukernels=False: IREE 3.13's mmt4d ukernel gives wrong results "
                    "on graph-level mmt4d ops (max error 29 on a 128x256x192 f32 matmul, any inner tile)",
                    self.ukernels,
                    hint=f"set CpuTarget(ukernels='none') for target {self.name!r}, or add a cpu_lowering rule "
                    "matching op name linalg.mmt4d with ukernels=False",
                )

    def check_strategy(self, index: int, match: MatcherKind, strategy: StrategyKind, target_index: int) -> None:
        """Raises ``problem`` when ``strategy`` cannot work with this CPU target."""
        if isinstance(strategy, CpuLowering):
            if strategy.pipeline == "BufferOpsTileAndVectorize" and match.operand_count() is not None:
                raise problem(
                    "pipeline",
                    "a pipeline that lowers contractions and convolutions: BufferOpsTileAndVectorize lowers "
                    "only dispatches of buffer copies (on a compute op IREE 3.13 fails: 'write affecting "
                    "operations on global resources are restricted to workgroup distributed contexts')",
                    strategy.pipeline,
                    hint="use DoubleTilingExpert",
                    strategy=strategy.name,
                )
            shape = match.loop_shape()
            if shape is not None and len(shape.roles) == len(strategy.distribution):
                _check_loop_roles(strategy, shape)
                contraction = next((m for m in leaves(match) if isinstance(m, ContractionMatch)), None)
                limit = self.vector_limit()
                if contraction is not None and limit is not None and strategy.pipeline in VECTOR_TILED_PIPELINES:
                    _check_vector_size(strategy, shape, contraction, limit, self.cpu)
                elif contraction is not None and limit is not None and strategy.pipeline == "DataTiling":
                    _check_data_tiling(strategy, shape, contraction, limit, self.cpu)
            _check_convolution_loops(strategy, match)
            for leaf in leaves(match):
                if isinstance(leaf, ConvolutionMatch) and leaf.batch == ((1,),):
                    raise problem(
                        f"rules[{index}].match.batch",
                        "a batch other than 1: IREE drops the compilation_info of batch-1 "
                        "convolutions on llvm-cpu (InsertBatchDimForBatchlessConv rebuilds the op)",
                        [1],
                    )
        if (
            self.data_tiling
            and isinstance(strategy, CpuLowering)
            and strategy.injection is Injection.TUNING_SPEC
            and _data_tiled(match)
        ):
            raise problem(
                f"targets[{target_index}].data_tiling",
                "False when a codegen-time cpu_lowering configures a matmul: with --iree-opt-data-tiling the op "
                "still is a matmul with encodings when the tuning spec runs, and IREE 3.13 drops the config when "
                "it becomes linalg.mmt4d, then fails ('failed to build pass pipeline')",
                True,
                hint="use graph_cpu_lowering (GraphCpuLowering): pinned at the graph level, data tiling leaves the op alone",
                strategy=strategy.name,
            )
        if isinstance(strategy, Codegen):
            for field in ("gpu", "promote_operands", "mma"):
                if getattr(strategy, field):
                    raise problem(
                        field, f"nothing on {self.backend} (GPU only)", getattr(strategy, field), strategy=strategy.name
                    )
            for i, level in enumerate(strategy.tiling):
                if isinstance(level, TileUsingForall) and level.mapping_kind != "block":
                    raise problem(
                        f"tiling[{i}].mapping",
                        f"block mapping only on {self.backend}",
                        list(level.mapping),
                        strategy=strategy.name,
                    )


MMT4D_ROLES = ("m", "n", "k", "m", "n", "k")
"""linalg.mmt4d's loops (M1, N1, K1, M0, N0, K0)."""


def _data_tiled(match: MatcherKind) -> bool:
    """``match`` may select a matmul that IREE's data tiling rewrites (a contraction matcher,
    or an op name of a matmul or batch matmul). Data tiling sets encodings on contractions
    whose m, n and k loops each collapse to one loop (IREE collapses loops of a role that are
    adjacent, in order, in every operand); a contraction matcher whose maps put two loops of
    one role apart in some operand selects an op it leaves alone: linalg.mmt4d (its codegen
    config applied with --iree-opt-data-tiling on BERT's packed 1x64x256 by 256x1024
    projection) or a matmul with RHS panels (``[M, N1, N0, K]``, the RHS ``[N1, K, N0]``;
    its config applied on a 1024^3 matmul)."""
    for leaf in leaves(match):
        if isinstance(leaf, ContractionMatch):
            shape = leaf.loop_shape()
            return shape is None or shape.roles != MMT4D_ROLES and not _split_role(shape)
        if isinstance(leaf, OpNameMatch) and any(n in ("linalg.matmul", "linalg.batch_matmul") for n in leaf.names):
            return True
    return False


def _split_role(shape: LoopShape) -> bool:
    """Some operand of ``shape`` indexes two loops of one role that are not adjacent and in
    loop order (so IREE cannot collapse them into one loop)."""
    if shape.operands is None:
        return False
    for dims in shape.operands:
        for role in set(shape.roles):
            loops = [d for d in dims if shape.roles[d] == role]
            if len(loops) < 2:
                continue
            at = [dims.index(d) for d in loops]
            if (
                loops != sorted(loops)
                or at != list(range(at[0], at[0] + len(at)))
                or any(b != a + 1 for a, b in zip(loops, loops[1:]))
            ):
                return True
    return False


def _check_loop_roles(strategy: CpuLowering, shape: LoopShape) -> None:
    """IREE refuses a tile on a reduction loop in a parallel level and vice versa."""
    roles = "".join(shape.roles)
    _check_level_kinds(
        strategy,
        lambda count: [i for i in range(count) if not shape.parallel(i)],
        lambda i, other, _: f"loop {i} is a {other} loop ({shape.roles[i]} of the matched loops {roles})",
    )


def _check_level_kinds(
    strategy: CpuLowering,
    reduction_loops: Callable[[int], Sequence[int] | None],
    describe: Callable[[int, str, Sequence[int]], str],
) -> None:
    """Raises ``problem`` at the first tile of a parallel level on a reduction loop, or of a
    reduction level on a parallel loop. ``reduction_loops(n)``: the reduction loops among
    ``n`` (None: unknown); ``describe(i, kind, reductions)``: what loop ``i`` of that kind is."""
    for level in PARALLEL_LEVELS + REDUCTION_LEVELS:
        sizes = getattr(strategy, level)
        reductions = None if sizes is None else reduction_loops(len(sizes))
        if sizes is None or reductions is None:
            continue
        parallel = level in PARALLEL_LEVELS
        for i, size in enumerate(sizes):
            if size and (i in reductions) == parallel:
                kind, other = ("parallel", "reduction") if parallel else ("reduction", "parallel")
                raise problem(
                    f"{level}[{i}]",
                    f"0: {describe(i, other, reductions)} and {level} tiles only {kind} loops",
                    size,
                    hint="tile reduction loops in cache_reduction or vector_reduction"
                    if parallel
                    else "tile parallel loops in distribution, cache_parallel or vector_common_parallel",
                    strategy=strategy.name,
                )


NAMED_CONVOLUTIONS = ("linalg.conv_", "linalg.depthwise_conv_", "linalg.pooling_")
"""Name prefixes of linalg's named convolutions: their loops are the parallel ones first."""


def _check_convolution_loops(strategy: CpuLowering, match: MatcherKind) -> None:
    """IREE refuses a tile on a convolution's reduction loop (filter, input channel) in a
    parallel level and vice versa; checked where the matcher fixes the loop order (its
    ``maps``, or an op name of linalg's named convolutions). Elsewhere IREE's error is
    mapped back to the level and loop (``tdsl.compiler.diagnostics``)."""
    found = leaves(match)
    conv = next((m for m in found if isinstance(m, ConvolutionMatch)), None)
    if conv is None:
        return
    named = any(isinstance(m, OpNameMatch) and all(n.startswith(NAMED_CONVOLUTIONS) for n in m.names) for m in found)
    source = (
        "its maps" if conv.maps is not None else "a named convolution: parallel loops, then filter and input channel"
    )
    _check_level_kinds(
        strategy,
        lambda count: conv.reduction_loops(named, count),
        lambda i, other, reductions: (
            f"loop {i} of the matched convolution is a {other} loop ({source}; reduction loops {list(reductions)})"
        ),
    )


def _check_vector_size(
    strategy: CpuLowering, shape: LoopShape, contraction: ContractionMatch, limit: int, cpu: str
) -> None:
    """The vector.contract of one vector tile (every loop's innermost tile: its vector
    level, else the enclosing level, else the whole dimension where the matcher fixes it)
    stays below IREE's vector size limit."""
    dims = contraction.problem_dims(shape.roles)
    extents: list[int] = []
    setters: list[str | None] = []
    for i in range(len(shape.roles)):
        sizes = [getattr(strategy, level)[i] for level in CpuLowering.LEVELS if getattr(strategy, level) is not None]
        tiles = [t for t in sizes if t]
        if dims[i] is not None:
            tiles.append(dims[i])
        extents.append(min(tiles) if tiles else 1)
        setters.append(
            next((lv for lv in VECTOR_LEVELS if getattr(strategy, lv) is not None and getattr(strategy, lv)[i]), None)
        )
    bits = ELEMENT_BITS[contraction.output_type]
    if strategy.pipeline == "DoubleTilingExpert":
        _check_accumulator(strategy, shape, dims, bits, contraction.output_type, limit, cpu)
    total = bits
    for e in extents:
        total *= e
    size = -(-total // 8)
    if size < limit:
        return
    loop = max(range(len(extents)), key=lambda i: extents[i])
    others = bits
    for i, e in enumerate(extents):
        if i != loop:
            others *= e
    largest = 8 * (limit - 1) // others
    level = setters[loop] or ("vector_common_parallel" if shape.parallel(loop) else "vector_reduction")
    field = f"{level}[{loop}]"
    shown = "x".join(str(e) for e in extents)
    raise problem(
        field,
        f"vector tiles below IREE's vector size limit on {cpu} ({limit} bytes): the vector tile "
        f"{shown} of {contraction.output_type} (loops {''.join(shape.roles)}) makes a {size}-byte vector.contract",
        Described(str(getattr(strategy, level)[loop]) if getattr(strategy, level) is not None else "no tile"),
        hint=f"the largest legal {field} is {largest}"
        if largest >= 1
        else "shrink the vector tiles of the other loops",
        strategy=strategy.name,
    )


def _check_accumulator(
    strategy: CpuLowering, shape: LoopShape, dims: list[int | None], bits: int, out_type: str, limit: int, cpu: str
) -> None:
    """With a cache_reduction level the accumulator is initialised (a vector of the result
    tile) outside the reduction loop, at the cache_parallel tile (or the distribution tile):
    that vector too stays below IREE's limit."""
    if not any(strategy.cache_reduction or ()):
        return
    levels = [lv for lv in ("distribution", "cache_parallel") if getattr(strategy, lv) is not None]
    extents: dict[int, int] = {}
    for i in range(len(shape.roles)):
        if not shape.parallel(i):
            continue
        tiles = [getattr(strategy, lv)[i] for lv in levels if getattr(strategy, lv)[i]]
        size = dims[i]
        if size is not None:
            tiles.append(size)
        extents[i] = min(tiles) if tiles else 1
    total = bits
    for e in extents.values():
        total *= e
    size = -(-total // 8)
    if size < limit or not extents:
        return
    loop = max(extents, key=lambda i: extents[i])
    others = total // extents[loop]
    largest = 8 * (limit - 1) // others
    field = f"cache_parallel[{loop}]"
    shown = "x".join(str(extents[i]) for i in sorted(extents))
    raise problem(
        field,
        f"a result tile below IREE's vector size limit on {cpu} ({limit} bytes): with cache_reduction set "
        f"the accumulator is a vector of the cache_parallel tile, here {shown} of {out_type} ({size} bytes)",
        Described(str(strategy.cache_parallel[loop]) if strategy.cache_parallel is not None else "no tile"),
        hint=f"the largest legal {field} is {largest}" if largest >= 1 else "shrink the cache_parallel tiles",
        strategy=strategy.name,
    )


def _check_data_tiling(
    strategy: CpuLowering, shape: LoopShape, contraction: ContractionMatch, limit: int, cpu: str
) -> None:
    """DataTiling vectorizes the distribution tile (its vector levels are not used on a
    plain contraction): at least the result tile of the distribution level is one vector,
    which stays below IREE's limit."""
    dims = contraction.problem_dims(shape.roles)
    extents: dict[int, int] = {}
    for i in range(len(shape.roles)):
        if shape.parallel(i):
            tiles = [t for t in (strategy.distribution[i], dims[i]) if t]
            extents[i] = min(tiles) if tiles else 1
    bits = ELEMENT_BITS[contraction.output_type]
    total = bits
    for e in extents.values():
        total *= e
    size = -(-total // 8)
    if size < limit or not extents:
        return
    loop = max(extents, key=lambda i: extents[i])
    largest = 8 * (limit - 1) // (total // extents[loop])
    raise problem(
        f"distribution[{loop}]",
        f"a distribution tile below IREE's vector size limit on {cpu} ({limit} bytes): pipeline DataTiling "
        f"vectorizes the distribution tile, here a result tile of {'x'.join(str(extents[i]) for i in sorted(extents))} "
        f"{contraction.output_type} ({size} bytes)",
        Described(str(strategy.distribution[loop]) if strategy.distribution[loop] else "0 (the whole dimension)"),
        hint=f"the largest legal distribution[{loop}] is {largest}"
        if largest >= 1
        else "shrink the distribution tiles",
        strategy=strategy.name,
    )


def _no_ukernel_mmt4d(match: MatcherKind, strategy: StrategyKind) -> bool:
    """The rule configures every ``linalg.mmt4d`` at codegen time without ukernels."""
    return (
        isinstance(match, OpNameMatch)
        and "linalg.mmt4d" in match.names
        and isinstance(strategy, CpuLowering)
        and strategy.injection is Injection.TUNING_SPEC
        and not strategy.ukernels
    )
