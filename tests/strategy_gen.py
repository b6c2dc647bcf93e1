"""Hypothesis generators of strategy sets as plain data (dicts and lists, what YAML or JSON
gives), valid ones and mutated ones, and the one check every generated set must pass.

Used by ``tests/model/test_fuzz_strategies.py`` (a bounded run in the default suite) and by
``benchmarks/fuzz_strategies.py`` / ``benchmarks/compile_fuzz.py`` (long runs).

* :func:`valid_sets` draws sets that are meant to validate: every model and field, with
  tile lists that follow the matched loops' roles (mostly; some draws ignore them).
* :func:`mutated_sets` takes such a set and breaks one place: a wrong type, a boolean
  for an integer, a huge or negative integer, an empty list, a newline in a name, an
  unknown enum value, a list one entry too long or short, an extra or a missing field.
* :func:`targeted_sets` draws sets whose rules select one op of a known payload (its
  loops, sizes and element types), for compiling.
* :func:`check` builds a set with ``tdsl.StrategySet.model_validate`` and renders every
  target that has rules; it classifies the outcome (:class:`Outcome`).
"""

from __future__ import annotations

import copy
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import tdsl
from hypothesis import strategies as st
from tdsl import GFX942, RenderError, StrategyError
from tdsl.model.base import StrategyModel

Data = dict[str, Any]
Draw = Callable[..., Any]

TYPES = [
    ("f32", "f32", "f32"),
    ("f16", "f16", "f32"),
    ("bf16", "bf16", "f32"),
    ("i8", "i8", "i32"),
    ("f64", "f64", "f64"),
]
DIM_SIZES = [1, 3, 16, 32, 64, 100, 128, 256, 384, 512]
TILES = [0, 1, 2, 4, 8, 16, 32, 64]
CPU_PIPELINES = [
    "DoubleTilingExpert",
    "ConvTileAndDecomposeExpert",
    "Mmt4dTilingExpert",
    "BufferOpsTileAndVectorize",
    "DataTiling",
    "LinalgExtTileAndVectorize",
    "Default",
]
CONV_GROUPS = ["batch", "output_image", "output_channel", "filter", "input_channel", "depth", "strides", "dilations"]
# Loop roles of a 2-D NHWC/HWCF convolution as a generic: n, oh, ow, oc, fh, fw, ic.
CONV_ROLES = ("b", "m", "m", "n", "k", "k", "k")


# --------------------------------------------------------------------------------------
# The op a rule is meant for: its loops, sizes and element types.


@dataclass(frozen=True)
class Op:
    """A payload op a rule targets: loop roles (b/m/n/k, None when unknown), sizes per loop
    (None: unknown), element types (lhs, rhs, out), its named op and family. ``codegen``
    holds the op as codegen sees it where IREE changed it before (per backend: a
    quantized_matmul is an i8 matmul by then, a unit batch may be dropped, f64 demoted)."""

    family: str  # "matmul", "batch_matmul", "matvec", "conv", "generic", "pack", "quantized", "transpose"
    roles: Optional[tuple[str, ...]]
    sizes: tuple[Optional[int], ...]
    types: tuple[str, str, str]
    named: Optional[str] = None
    layout: Optional[str] = None  # operand_layout of a contraction
    epilogue: bool = False  # its dispatch also holds a consumer (a Codegen strategy tiles only the root)
    codegen: tuple[tuple[str, "Op"], ...] = ()  # (backend, the op at codegen time)

    @property
    def loops(self) -> int:
        return len(self.sizes)

    def at_codegen(self, backend: str) -> "Op":
        """The op a codegen-time rule for ``backend`` sees."""
        return next((op for name, op in self.codegen if name == backend), self)


BACKENDS = ("llvm-cpu", "rocm")


def _pick(draw: Draw, values: list[Any]) -> Any:
    return draw(st.sampled_from(values))


@st.composite
def ops(draw: Draw) -> Op:
    """A random op family with random sizes, real-model forms among them (a batch-1
    batch_matmul, a quantized matmul, a named transpose, a convolution whose unit batch
    IREE drops, a masked-softmax generic with an i1 or i8 mask)."""
    family = _pick(
        draw,
        ["matmul", "matmul", "batch_matmul", "matvec", "conv", "generic", "pack", "quantized", "transpose", "masked"],
    )
    if family in ("quantized", "transpose", "masked"):
        return draw(model_ops(family))
    types = _pick(draw, TYPES)
    if family == "matmul":
        return Op(
            "matmul",
            ("m", "n", "k"),
            tuple(_pick(draw, DIM_SIZES) for _ in range(3)),
            types,
            "linalg.matmul",
            _pick(draw, ["mk_kn", "mk_kn", "mk_nk", "km_kn", None]),
        )
    if family == "batch_matmul":
        sizes = tuple(_pick(draw, DIM_SIZES) for _ in range(4))
        if draw(st.integers(0, 2)) == 0:
            sizes = (1, *sizes[1:])  # what ONNX MatMul of a 3-D activation by a 2-D weight gives
        return Op(
            "batch_matmul", ("b", "m", "n", "k"), sizes, types, "linalg.batch_matmul", _pick(draw, ["mk_kn", None])
        )
    if family == "matvec":
        return Op(
            "matvec",
            ("n", "k"),
            tuple(_pick(draw, DIM_SIZES) for _ in range(2)),
            types,
            None,
            _pick(draw, ["k_kn", "k_nk"]),
        )
    if family == "conv":
        batch = _pick(draw, [1, 2])
        sizes = (batch, _pick(draw, [8, 16, 32]), _pick(draw, [8, 16, 32]), _pick(draw, [16, 64]), 3, 3, 32)
        return conv_op(sizes, types)
    if family == "pack":
        rank = draw(st.integers(1, 3))
        return Op("pack", None, (None,) * rank, types)
    return Op("generic", None, (None,) * draw(st.integers(1, 4)), types, "linalg.generic")


def conv_op(sizes: tuple[int, ...], types: tuple[str, str, str], epilogue: bool = False) -> Op:
    """A 2-D NHWC convolution of these loop sizes (n, oh, ow, oc, fh, fw, ic); with a batch
    of 1, gfx942's codegen sees it without its batch loop (IREE drops unit dims)."""
    op = Op("conv", CONV_ROLES, sizes, types, "linalg.conv_2d_nhwc_hwcf", epilogue=epilogue)
    if sizes[0] != 1:
        return op
    dropped = Op("conv", CONV_ROLES[1:], sizes[1:], types, None, epilogue=epilogue)
    return Op(
        "conv", CONV_ROLES, sizes, types, "linalg.conv_2d_nhwc_hwcf", epilogue=epilogue, codegen=(("rocm", dropped),)
    )


def quantized_op(m: int, n: int, k: int, epilogue: bool = True) -> Op:
    """linalg.quantized_matmul (i8 x i8 with zero points -> i32) at the graph level; codegen
    sees the i8 x i8 -> i32 linalg.matmul IREE rewrites it to (its zero-point fix-up fused)."""
    types = ("i8", "i8", "i32")
    matmul = Op("matmul", ("m", "n", "k"), (m, n, k), types, "linalg.matmul", "mk_kn", epilogue=epilogue)
    return Op(
        "quantized",
        ("m", "n", "k"),
        (m, n, k),
        types,
        "linalg.quantized_matmul",
        codegen=tuple((backend, matmul) for backend in BACKENDS),
    )


@st.composite
def model_ops(draw: Draw, family: str) -> Op:
    """Ops of the forms real models have: a quantized matmul, a named transpose of a head
    split, a masked-softmax generic (an i1 or i8 mask selecting -inf)."""
    if family == "quantized":
        return quantized_op(*(_pick(draw, [16, 32, 64]) for _ in range(3)))
    if family == "transpose":
        return Op("transpose", None, (None,) * 4, ("f32", "f32", "f32"), "linalg.transpose")
    mask = _pick(draw, ["i1", "i8"])
    return Op("generic", None, (None,) * _pick(draw, [2, 3]), ("f32", mask, "f32"), "linalg.generic")


# --------------------------------------------------------------------------------------
# Matchers.


def _dims(draw: Draw, sizes: list[Optional[int]], exact: bool) -> Any:
    """A dims group for these sizes: exact, any (None), an int, or a one_of set (one of
    its alternatives the sizes with a dynamic dimension, ``"?"`` or -1, as IREE's
    ``dims_equal`` takes it for dynamic-shape ops)."""
    if any(s is None for s in sizes):
        return None
    choice = "exact" if exact else _pick(draw, ["exact", "exact", "any", "one_of", "dynamic"])
    if choice == "any":
        return _pick(draw, [None, "any"])
    if choice == "dynamic" and sizes:
        where = draw(st.integers(0, len(sizes) - 1))
        dynamic = [_pick(draw, ["?", -1]) if i == where else s for i, s in enumerate(sizes)]
        return [list(sizes), dynamic] if draw(st.booleans()) else {"one_of": [list(sizes), dynamic]}
    if choice == "one_of" and len(sizes) == 1:
        other = _pick(draw, DIM_SIZES)
        return {"one_of": [sizes[0], other]} if draw(st.booleans()) else [[sizes[0]], [other]]
    if len(sizes) == 1 and draw(st.booleans()):
        return sizes[0]
    return list(sizes)


@st.composite
def matchers(draw: Draw, op: Op, codegen_phase: bool, backend: str, exact: bool = False) -> Data:
    """A matcher that selects ``op`` (``exact``: with every size it has)."""
    lhs, rhs, out = op.types
    typed = {"lhs_type": lhs, "rhs_type": rhs, "output_type": out}
    leaf: Data
    if op.family in ("matmul", "batch_matmul", "matvec"):
        named_ok = (
            op.named is not None and op.layout in (None, "mk_kn") and (backend == "llvm-cpu" or not codegen_phase)
        )
        if named_ok and not exact and draw(st.integers(0, 3)) == 0:
            leaf = {"kind": "op_name", "names": op.named if draw(st.booleans()) else [op.named]}
        else:
            roles = op.roles or ()
            groups: dict[str, list[Optional[int]]] = {"b": [], "m": [], "n": [], "k": []}
            for role, size in zip(roles, op.sizes):
                groups[role].append(size)
            leaf = {"kind": "contraction", **typed}
            use_layout = op.layout is not None and (exact or draw(st.booleans()) or op.family == "matvec")
            leaf["batch"] = groups["b"] if (use_layout or draw(st.booleans())) else _dims(draw, groups["b"], exact)
            for g in ("m", "n", "k"):
                if op.family == "matvec" and g == "m":
                    leaf["m"] = []
                    continue
                value = (
                    _dims(draw, groups[g], exact)
                    if not use_layout
                    else (groups[g][0] if exact or draw(st.booleans()) else None)
                )
                if value is not None or draw(st.booleans()):
                    leaf[g] = value
            if use_layout:
                leaf["operand_layout"] = op.layout
                if op.layout and not op.layout.startswith("k_") and draw(st.integers(0, 4)) == 0:
                    leaf["k_min"] = _pick(draw, [1, 16, 128])
    elif op.family == "conv":
        leaf = {"kind": "convolution", **typed}
        for g, value in (*_conv_groups(op), ("strides", [1, 1]), ("dilations", [1, 1])):
            if exact or draw(st.booleans()):
                leaf[g] = value
    elif op.family == "quantized" or op.family == "transpose":
        leaf = {"kind": "op_name", "names": [op.named]}
    elif op.family == "pack":
        rank = op.loops
        count = draw(st.integers(1, rank))
        leaf = {
            "kind": "pack_op",
            "element_type": lhs,
            "inner_dims_pos": draw(st.permutations(list(range(rank))))[:count],
            "inner_tiles": [_pick(draw, [1, 4, 8, 16]) for _ in range(count)],
            "unpacked_rank": rank,
        }
        if draw(st.booleans()):
            leaf["op"] = _pick(draw, ["pack", "unpack"])
        if draw(st.integers(0, 3)) == 0:
            leaf["outer_dims_perm"] = draw(st.permutations(list(range(rank))))
    else:
        leaf = {"kind": "op_name", "names": [_pick(draw, ["linalg.generic", "linalg.fill", "linalg.transpose"])]}
    if draw(st.integers(0, 4)) == 0:
        extra: list[Data] = [{"kind": "function", "function": _pick(draw, ["main", "matmul", "f_dispatch_0"])}]
        if draw(st.booleans()):
            extra.append({"kind": "consumer", "names": ["tensor.expand_shape"]})
        return {"kind": "all_of", "matchers": [leaf, *extra]}
    return leaf


# --------------------------------------------------------------------------------------
# Strategies.


def _conv_groups(op: Op) -> list[tuple[str, list[Optional[int]]]]:
    """The convolution matcher's groups of a 2-D NHWC conv op (its batch may be dropped)."""
    sizes = list(op.sizes)
    batch = sizes[:1] if op.roles and op.roles[0] == "b" else []
    rest = sizes[len(batch) :]
    return [
        ("batch", batch),
        ("output_image", rest[0:2]),
        ("output_channel", rest[2:3]),
        ("filter", rest[3:5]),
        ("input_channel", rest[5:6]),
    ]


def _roles(op: Op) -> tuple[str, ...]:
    """Loop roles to draw tiles by (unknown ops: the last loop is taken as the reduction)."""
    if op.roles is not None:
        return op.roles
    return ("m",) if op.loops == 1 else ("m",) * (op.loops - 1) + ("k",)


def _level(
    draw: Draw, roles: tuple[str, ...], parallel: bool, choices: list[int] = TILES, sloppy: bool = False
) -> list[int]:
    """A tile list: non-zero only on parallel (or reduction) loops unless ``sloppy``."""
    return [_pick(draw, choices) if sloppy or (role != "k") == parallel else 0 for role in roles]


@st.composite
def data_layouts(draw: Draw, name: str, op: Op, specialize_ok: bool) -> Data:
    s: Data = {"kind": "data_layout", "name": name}
    if draw(st.integers(0, 11)) == 0:
        return s | {"fuse_head_split": True}  # refused on a contraction / convolution matcher
    n = op.loops
    contraction = op.family in ("matmul", "batch_matmul", "conv")
    if draw(st.booleans()):
        s["generalize"] = True
    if s.get("generalize") and draw(st.integers(0, 2)) == 0:
        s["interchange"] = draw(st.permutations(list(range(n))))
    if not contraction or draw(st.integers(0, 3)) == 0:
        if not s.get("generalize") and "interchange" not in s:
            s["generalize"] = True
        # consumer options act on the op's consumers: only for ops that have some (an op of a
        # known payload without one would make the transform fail at compile time)
        consumers = op.epilogue or op.family == "generic" or op.sizes[0] is None or not op.named
        if consumers and s.get("generalize") and draw(st.integers(0, 3)) == 0:
            s["propagate_reshapes"] = True
        elif consumers and draw(st.integers(0, 4)) == 0:
            s["consumer_interchange"] = draw(st.permutations(list(range(n))))
        return s
    # A batch matmul may have its unit batch folded first (valid where the matcher fixes a
    # batch of 1 and every other size, as a batch-1 op's exact matcher does); the pack then
    # sees the folded loops.
    roles = _roles(op)
    if op.family == "batch_matmul" and s.get("generalize") and "interchange" not in s and draw(st.integers(0, 2)) == 0:
        s["fold_unit_dims"] = True
        roles = tuple(r for r in roles if r != "b")
        n = len(roles)
    if draw(st.integers(0, 3)) == 0:
        s["pack"] = {"kind": "pack", "packed_sizes": [_pick(draw, [0, 4, 8, 16]) for _ in range(n)]}
        if not any(s["pack"]["packed_sizes"]):
            s["pack"]["packed_sizes"][-1] = 4
        packed_roles = "".join(r for r, size in zip(roles, s["pack"]["packed_sizes"]) if size)
    else:
        sizes = [_pick(draw, [0, 1, 4, 8, 16, 32]) for _ in range(3)]
        pack: Data = {"kind": "pack_greedily", "matmul_packed_sizes": sizes}
        if draw(st.integers(0, 3)) == 0:
            pack["matmul_padded_sizes_next_multiple_of"] = [0 if size else _pick(draw, [0, 16]) for size in sizes]
        if draw(st.integers(0, 2)) == 0:
            pack["matmul_inner_dims_order"] = draw(st.permutations([0, 1, 2]))
        if not any(sizes) and not any(pack.get("matmul_padded_sizes_next_multiple_of", [0])):
            sizes[0] = 8
        s["pack"] = pack
        padded = pack.get("matmul_padded_sizes_next_multiple_of", [0, 0, 0])
        order = pack.get("matmul_inner_dims_order", [0, 1, 2])
        packed_roles = "".join("mnk"[i] for i in order if sizes[i] or padded[i])
    transposes = []
    ranks = {
        "lhs": sum(r in "bmk" for r in roles),
        "rhs": sum(r in "bkn" for r in roles),
        "result": sum(r in "bmn" for r in roles),
    }
    uses = {"lhs": "bmk", "rhs": "bkn", "result": "bmn"}
    for operand in draw(st.lists(st.sampled_from(["lhs", "rhs", "result"]), max_size=2, unique=True)):
        tiles = sum(r in uses[operand] for r in packed_roles)
        t: Data = {"operand": operand}
        if operand != "result" and draw(st.booleans()):
            t["outer_perm"] = draw(st.permutations(list(range(ranks[operand]))))
        if tiles and (draw(st.booleans()) or "outer_perm" not in t):
            t["inner_perm"] = draw(st.permutations(list(range(tiles))))
        if "outer_perm" in t or "inner_perm" in t:
            transposes.append(t)
    if transposes:
        s["pack_transposes"] = transposes
    if specialize_ok and draw(st.integers(0, 2)) == 0:
        s["specialize"] = True
    elif draw(st.integers(0, 3)) == 0:
        s["lower_packs"] = True
    elif draw(st.integers(0, 3)) == 0:
        s["lower_unpack"] = True  # refused where the result is not packed
    return s


@st.composite
def cpu_lowerings(draw: Draw, name: str, op: Op) -> Data:
    roles = _roles(op)
    sloppy = draw(st.integers(0, 9)) == 0
    s: Data = {"kind": "cpu_lowering", "name": name}
    if draw(st.booleans()):
        s["pipeline"] = _pick(draw, CPU_PIPELINES)
    s["distribution"] = _level(draw, roles, True, [0, 8, 16, 32, 64], sloppy)
    if draw(st.integers(0, 3)) == 0 and s.get("pipeline") != "Mmt4dTilingExpert":
        s["cache_parallel"] = _level(draw, roles, True, [0, 8, 16, 32], sloppy)
        s["cache_reduction"] = _level(draw, roles, False, [0, 16, 32], sloppy)
    if draw(st.integers(0, 4)):
        s["vector_common_parallel"] = _level(draw, roles, True, [0, 1, 2, 4, 8, 16], sloppy)
        s["vector_reduction"] = _level(draw, roles, False, [0, 1, 2, 4, 8], sloppy)
        if s["vector_reduction"] and s["vector_common_parallel"]:
            s["vector_reduction"] = [0 if p else r for p, r in zip(s["vector_common_parallel"], s["vector_reduction"])]
    return s


@st.composite
def gpu_lowerings(draw: Draw, name: str, op: Op) -> Data:
    roles = _roles(op)
    lhs, rhs, out = op.types
    intrinsics = [x for x in GFX942.mma_intrinsics if (x.a_type, x.b_type, x.c_type) == (lhs, rhs, out)]
    s: Data = {"kind": "gpu_lowering", "name": name}
    workgroup = [0] * len(roles)
    m_loops = [i for i, r in enumerate(roles) if r == "m"]
    n_loops = [i for i, r in enumerate(roles) if r == "n"]
    k_loops = [i for i, r in enumerate(roles) if r == "k"]
    for i, r in enumerate(roles):
        if r == "b":
            workgroup[i] = 1
        elif r in "mn" and i not in (m_loops[-1:] + n_loops[-1:]):
            workgroup[i] = 1
    reduction = [0] * len(roles)
    use_mma = bool(intrinsics) and draw(st.integers(0, 3)) > 0
    subgroups = 1
    if use_mma:
        intrinsic = _pick(draw, intrinsics)
        s["mma_kind"] = intrinsic.name
        vector_distribute = draw(st.integers(0, 3)) == 0 and len(roles) == 3 and roles == ("m", "n", "k")
        counts = []
        tiles = []
        for loops_of, size in ((m_loops, intrinsic.m), (n_loops, intrinsic.n)):
            count, tile = _pick(draw, [1, 2]), _pick(draw, [1, 2])
            if loops_of:
                workgroup[loops_of[-1]] = count * tile * size
            counts.append(count)
            tiles.append(tile)
            subgroups *= count if loops_of else 1
        if vector_distribute:
            s["pipeline"] = "VectorDistribute"
            s["subgroup_basis"] = [[counts[0], counts[1], 1], [0, 1, 2]]
            for i in k_loops[-1:]:
                reduction[i] = intrinsic.k * _pick(draw, [1, 2, 4])
        else:
            subgroup = [0] * len(roles)
            for loops_of, tile in ((m_loops, tiles[0]), (n_loops, tiles[1])):
                for i in loops_of[-1:]:
                    subgroup[i] = tile
            s["subgroup"] = subgroup
            for i in k_loops[-1:]:
                reduction[i] = _pick(draw, [1, 2, 4])
    else:
        thread = [0] * len(roles)
        for loops_of in (m_loops, n_loops):
            for i in loops_of[-1:]:
                workgroup[i] = _pick(draw, [16, 32, 64])
                thread[i] = _pick(draw, [1, 2, 4])
        s["thread"] = thread
        for i in k_loops[-1:]:
            reduction[i] = _pick(draw, [4, 8, 16])
        threads = 1
        for i in m_loops[-1:] + n_loops[-1:]:
            threads *= workgroup[i] // thread[i]
        subgroups = max(1, threads // GFX942.subgroup_size)
    s["workgroup"] = workgroup
    s["reduction"] = reduction
    s["workgroup_size"] = [subgroups * GFX942.subgroup_size, 1, 1]
    if draw(st.booleans()):
        s["promote_operands"] = draw(st.lists(st.sampled_from([0, 1, 2]), unique=True, max_size=3))
    if draw(st.integers(0, 3)) == 0:
        s["prefetch_num_stages"] = draw(st.integers(0, 4))
    if draw(st.integers(0, 5)) == 0:
        s["padding"] = [w or 0 for w in workgroup]
        for i in k_loops[-1:]:
            s["padding"][i] = reduction[i] * (1 if s.get("pipeline") == "VectorDistribute" else 16)
    if op.family == "conv" and draw(st.booleans()):
        s["use_igemm_convolution"] = draw(st.booleans())
    return s


@st.composite
def codegens(draw: Draw, name: str, op: Op, backend: str) -> Data:
    roles = _roles(op)
    gpu = backend == "rocm"
    root = op.named if (op.named and not gpu and op.family in ("matmul", "batch_matmul")) else "linalg.generic"
    parallel = [i for i, r in enumerate(roles) if r != "k"]
    block_tiles = [0] * len(roles)
    for i in parallel[-2:]:
        block_tiles[i] = _pick(draw, [16, 32, 64])
    while block_tiles and block_tiles[-1] == 0:
        block_tiles.pop()
    mapping = ["block_z", "block_y", "block_x"][-sum(1 for t in block_tiles if t) :]
    tiling: list[Data] = [{"kind": "forall", "tile_sizes": block_tiles, "mapping": mapping}]
    s: Data = {"kind": "codegen", "name": name, "root": root}
    if gpu and draw(st.booleans()):
        threads = [0] * len(block_tiles)
        for i, t in enumerate(block_tiles):
            if t:
                threads[i] = _pick(draw, [4, 8])
        tiling.append({"kind": "for", "tile_sizes": [0] * (len(roles) - 1) + [_pick(draw, [4, 8, 16])]})
        tiling.append(
            {
                "kind": "forall",
                "num_threads": threads,
                "mapping": ["thread_z", "thread_y", "thread_x"][-sum(1 for t in threads if t) :],
            }
        )
        s["gpu"] = {"workgroup_dims": [threads[-1] or 1, (threads[-2] if len(threads) > 1 else 1) or 1, 1]}
        if draw(st.booleans()):
            s["promote_operands"] = draw(st.lists(st.sampled_from([0, 1]), unique=True, min_size=1))
            s["promote_after"] = 1
    else:
        inner = [_pick(draw, [0, 4, 8, 16]) if r != "k" else 0 for r in roles]
        if any(inner):
            tiling.append({"kind": "for", "tile_sizes": inner})
        tiling.append({"kind": "for", "tile_sizes": [0] * (len(roles) - 1) + [_pick(draw, [1, 2, 4])]})
        if gpu:
            s["gpu"] = {"workgroup_dims": [64, 1, 1]}
            intrinsics = [x for x in GFX942.mma_intrinsics if (x.a_type, x.b_type, x.c_type) == op.types]
            if intrinsics and draw(st.booleans()):
                s["mma"] = {"intrinsic": _pick(draw, intrinsics).name}
    s["tiling"] = tiling
    if draw(st.booleans()):
        s["vector_lowering"] = {
            "contraction": _pick(draw, ["dot", "llvmintr", "outerproduct", "parallelarith"]),
            "transpose": _pick(draw, ["eltwise", "llvmintr", "shuffle_1d", "shuffle_16x16"]),
            "transfer_max_rank": _pick(draw, [1, 1, 1, 2]),
        }
    if draw(st.integers(0, 3)) == 0:
        s["cleanup"] = draw(
            st.lists(
                st.sampled_from(["canonicalization", "tiling_canonicalization", "for_loop_canonicalization"]),
                unique=True,
            )
        )
    if draw(st.integers(0, 4)) == 0:
        s["vectorize"] = False
        if "mma" not in s and draw(st.booleans()):
            s["vector_lowering"] = None  # nothing vectorized: no vector lowering
    return s


# --------------------------------------------------------------------------------------
# Rules and sets.


@st.composite
def targets(draw: Draw) -> Optional[list[Data]]:
    """None (the default cpu + gfx942 targets) or an explicit list."""
    if draw(st.booleans()):
        return None
    cpu: Data = {"kind": "llvm-cpu", "name": "cpu"}
    choice = _pick(draw, ["host", "host", "znver4", "haswell", "generic"])
    if choice != "host" or draw(st.booleans()):
        cpu["cpu"] = choice
    if choice != "host" and draw(st.integers(0, 3)) == 0:
        cpu["features"] = ["+avx2"]
    if draw(st.booleans()):
        cpu["ukernels"] = _pick(draw, ["none", "none", "default", "mmt4d", "all"])
    if draw(st.integers(0, 4)) == 0:
        cpu["im2col_convs"] = True
    if draw(st.integers(0, 4)) == 0:
        cpu["channels_last_convs"] = True
    if draw(st.integers(0, 3)) == 0:
        cpu["data_tiling"] = True
    if draw(st.integers(0, 4)) == 0:
        cpu["peel_vector_loops"] = True
    found = [cpu]
    if draw(st.booleans()):
        found.append({"kind": "rocm", "name": "gfx942", "arch": "gfx942"} if draw(st.booleans()) else {"kind": "rocm"})
    return found


@st.composite
def rules(
    draw: Draw, index: int, target: str, backend: str, specialize_ok: bool, op: Optional[Op] = None, exact: bool = False
) -> Data:
    op = op if op is not None else draw(ops())
    kinds = ["data_layout", "cpu_lowering" if backend == "llvm-cpu" else "gpu_lowering"] + (
        [] if op.at_codegen(backend).epilogue else ["codegen"]
    )
    kinds += ["graph_cpu_lowering"] if backend == "llvm-cpu" and op.family != "pack" else []
    kinds += ["kernel_rewrite"] if op.family != "pack" else []
    kind = _pick(draw, kinds + kinds[1:2])  # lowering configs twice as often
    if op.family == "pack" and kind != "data_layout":
        kind = "cpu_lowering" if backend == "llvm-cpu" else "data_layout"
    name = f"{kind.split('_')[0]}{index}"
    codegen_phase = kind not in ("data_layout", "graph_cpu_lowering")
    if codegen_phase:
        op = op.at_codegen(backend)
    match = draw(matchers(op, codegen_phase, backend, exact))
    if kind == "data_layout":
        strategy = draw(data_layouts(name, op, specialize_ok))
    elif kind in ("cpu_lowering", "graph_cpu_lowering"):
        strategy = draw(cpu_lowerings(name, op)) | {"kind": kind}
    elif kind == "gpu_lowering":
        strategy = draw(gpu_lowerings(name, op))
    elif kind == "kernel_rewrite":
        strategy = {"kind": kind, "name": name, "generalize": True}
    else:
        strategy = draw(codegens(name, op, backend))
    rule = {"target": target, "match": match, "strategy": strategy}
    if draw(st.integers(0, 4)) == 0:
        rule["optional"] = True
    return rule


@st.composite
def call_replacements(draw: Draw, index: int, target: str) -> Data:
    """A rule replacing a (zero-filled or not) matmul DAG with a call to a util.func the
    set carries, which computes it the same way."""
    element = _pick(draw, ["f32", "f16"])
    tensor = f"tensor<?x?x{element}>"
    fill = draw(st.booleans())
    body = [f"%zero = arith.constant 0.0 : {element}"] if fill else []
    if fill:
        body.append(f"%fill = linalg.fill ins(%zero : {element}) outs(%init : {tensor}) -> {tensor}")
    out = "%fill" if fill else "%init"
    body.append(f"%mm = linalg.matmul ins(%lhs, %rhs : {tensor}, {tensor}) outs({out} : {tensor}) -> {tensor}")
    arguments = f"%lhs: {tensor}, %rhs: {tensor}, %init: {tensor}"
    function = _pick(draw, ["kernel", "matmul_call", "f_1"])
    symbol = "\n".join(
        [f"util.func private @{function}({arguments}) -> {tensor} {{", *body, f"util.return %mm : {tensor}", "}"]
    )
    pattern = "\n".join([f"^bb0({arguments}):", *body])
    return {
        "target": target,
        "match": {"kind": "dag", "pattern": pattern},
        "strategy": {
            "kind": "call_replacement",
            "name": f"call{index}",
            "pattern": pattern,
            "function": function,
            "symbols": [symbol],
        },
    }


@st.composite
def valid_sets(draw: Draw) -> Data:
    """A strategy set meant to validate (most do; the sloppy draws may not)."""
    found = draw(targets())
    listed = found if found is not None else [{"kind": "llvm-cpu", "name": "cpu"}, {"kind": "rocm", "name": "gfx942"}]
    data: Data = {"name": _pick(draw, ["s", "fuzz", "set_1"])}
    if found is not None:
        data["targets"] = found
    count = draw(st.integers(1, 3))
    picked = []
    for i in range(count):
        target = _pick(draw, listed)
        backend = target["kind"]
        specialize_ok = backend == "llvm-cpu" and target.get("ukernels") == "none"
        picked.append(
            draw(rules(i, target.get("name", "cpu" if backend == "llvm-cpu" else "gfx942"), backend, specialize_ok))
        )
    if draw(st.integers(0, 5)) == 0:
        target = _pick(draw, listed)
        name = target.get("name", "cpu" if target["kind"] == "llvm-cpu" else "gfx942")
        picked.append(draw(call_replacements(count, name)))
    data["rules"] = picked
    return data


# --------------------------------------------------------------------------------------
# Mutations.


def _places(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """Every (path, value) below ``node`` (dict values and list entries), itself first."""
    found = [(path, node)]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _places(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _places(value, path + (i,))
    return found


HUGE = [2**63, 2**63 - 1, 2**64, -(2**63) - 1, 10**30, 10**400, -1]
WRONG_TYPES: list[Any] = ["x", 1.5, None, {}, [], True, False, "8", {"one_of": []}]


@st.composite
def mutated_sets(draw: Draw) -> Data:
    """A valid-looking set with one place broken."""
    data = copy.deepcopy(draw(valid_sets()))
    places = _places(data)
    path, value = _pick(draw, places)
    parent: Any = data
    for key in path[:-1]:
        parent = parent[key]
    kinds = ["wrong_type", "extra_field", "missing_field"]
    if isinstance(value, bool):
        kinds += ["int_for_bool"]
    elif isinstance(value, int):
        kinds += ["bool_for_int", "huge", "huge", "negative"]
    elif isinstance(value, str):
        kinds += ["newline", "newline", "unknown_enum", "empty_string"]
    elif isinstance(value, list):
        kinds += ["empty_list", "longer", "shorter", "longer"]
    mutation = _pick(draw, kinds)
    replacement: Any = value
    if mutation == "wrong_type":
        replacement = _pick(draw, WRONG_TYPES)
    elif mutation == "int_for_bool":
        replacement = _pick(draw, [0, 1, "yes"])
    elif mutation == "bool_for_int":
        replacement = _pick(draw, [True, False])
    elif mutation == "huge":
        replacement = _pick(draw, HUGE)
    elif mutation == "negative":
        replacement = -abs(value) - 1
    elif mutation == "newline":
        replacement = _pick(draw, [value + "\n", "\n" + value, value + "\r\nx", value[:1] + "\u2028" + value[1:]])
    elif mutation == "unknown_enum":
        replacement = _pick(draw, ["bogus", "matmulintrinsics", "flat_transpose", value.upper(), value + "x"])
    elif mutation == "empty_string":
        replacement = ""
    elif mutation == "empty_list":
        replacement = []
    elif mutation == "longer":
        extra = copy.deepcopy(value[-1]) if value else 0
        replacement = value + [extra] * _pick(draw, [1, 1, 20])
    elif mutation == "shorter":
        replacement = value[:-1]
    if mutation == "extra_field":
        target = value if isinstance(value, dict) else parent if isinstance(parent, dict) else data
        target[_pick(draw, ["extra", "tile_size", "names ", "kind\n"])] = 1
        return data
    if mutation == "missing_field":
        if isinstance(value, dict) and value:
            value.pop(_pick(draw, sorted(value)))
            return data
        if isinstance(parent, dict) and path:
            parent.pop(path[-1])
            return data
        replacement = None
    if not path:
        return data
    parent[path[-1]] = replacement
    return data


@st.composite
def any_sets(draw: Draw) -> Data:
    """Valid and mutated sets, about one valid in three."""
    return draw(valid_sets()) if draw(st.integers(0, 2)) == 0 else draw(mutated_sets())


@st.composite
def targeted_sets(draw: Draw, op: Op, target: str) -> Data:
    """A set with one rule (two sometimes) that selects ``op`` of a payload exactly, for
    ``target`` ("cpu" or "gfx942"); the cpu target has ukernels off (mmt4d layouts)."""
    backend = "llvm-cpu" if target == "cpu" else "rocm"
    rule_list = [draw(rules(0, target, backend, backend == "llvm-cpu", op=op, exact=True))]
    if draw(st.integers(0, 3)) == 0:
        rule_list.append(draw(rules(1, target, backend, backend == "llvm-cpu", op=op, exact=True)))
    cpu: Data = {"kind": "llvm-cpu", "name": "cpu", "ukernels": "none"}
    return {"name": "fuzz", "targets": [cpu if target == "cpu" else {"kind": "rocm"}], "rules": rule_list}


# --------------------------------------------------------------------------------------
# The check.


@dataclass
class Outcome:
    """What one generated set did: ``verified`` (accepted, every script verifies),
    ``verify_failure`` (accepted, a script does not verify), ``rejected`` (a
    StrategyError), ``bad_message`` (a StrategyError that is not one line per problem or
    names a path the input lacks) or ``other`` (any other exception)."""

    kind: str
    detail: str = ""
    seconds: float = 0.0
    error: Optional[BaseException] = field(default=None, repr=False)


def _all_fields() -> set[str]:
    names: set[str] = set()
    stack: list[type[Any]] = [StrategyModel]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        names.update(getattr(cls, "model_fields", {}))
    return names


_FIELDS: set[str] = set()
_PART = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\]")


def _parts(path: str) -> Optional[list[Any]]:
    parts: list[Any] = []
    pos = 0
    while pos < len(path):
        m = _PART.match(path, pos)
        if m is None or m.end() == pos:
            return None
        if m.group(1) is not None:
            parts.append(m.group(1))
        elif m.group(2) is not None:
            parts.append(int(m.group(2)))
        else:
            parts.append(eval(m.group(3)))  # noqa: S307 - a quoted key printed by repr()
        pos = m.end()
    return parts


def _resolves(node: Any, parts: list[Any]) -> bool:
    """``parts`` lead from ``node`` through the input; a missing dict key is fine if it is a
    field name (a default or a missing required field), and then the rest is not checked."""
    if not _FIELDS:
        _FIELDS.update(_all_fields())
    for _i, part in enumerate(parts):
        if isinstance(node, dict):
            if part in node:
                node = node[part]
                continue
            return isinstance(part, str) and part in _FIELDS
        if isinstance(node, list) and isinstance(part, int):
            if 0 <= part < len(node):
                node = node[part]
                continue
            return False
        return False
    return True


def path_in_input(data: Any, err: StrategyError) -> Optional[str]:
    """None when every problem of ``err`` names a path that exists in ``data`` (from the
    set, or from a strategy of that name); else the offending path."""
    for i, prob in enumerate(err.problems):
        anchor, path = err.strategy, prob.path
        if i and path.startswith("("):
            anchor, _, path = path[1:].partition(") ")
        parts = _parts(path)
        if parts is None:
            return f"{anchor}.{path}"
        roots: list[Any] = []
        if isinstance(data, dict) and anchor in (data.get("name"), "StrategySet"):
            roots.append(data)
        if isinstance(data, dict) and isinstance(data.get("rules"), list):
            for rule in data["rules"]:
                if (
                    isinstance(rule, dict)
                    and isinstance(rule.get("strategy"), dict)
                    and rule["strategy"].get("name") == anchor
                ):
                    roots.append(rule["strategy"])
        if not any(_resolves(root, parts) for root in roots):
            return f"{anchor}.{path}"
    return None


def check(data: Data, render: bool = True) -> Outcome:
    """Validates ``data`` as a StrategySet and renders every target with rules."""
    start = time.perf_counter()
    try:
        sset = tdsl.StrategySet.model_validate(data)
    except StrategyError as err:
        seconds = time.perf_counter() - start
        lines = str(err).splitlines()
        expected_lines = 1 if len(err.problems) == 1 else len(err.problems) + 1
        if len(lines) != expected_lines or any(len(p.describe(err.strategy).splitlines()) != 1 for p in err.problems):
            return Outcome("bad_message", f"not one line per problem: {str(err)!r}", seconds, err)
        bad = path_in_input(data, err)
        if bad is not None:
            return Outcome("bad_message", f"path {bad!r} is not in the input: {lines[0]}", seconds, err)
        return Outcome("rejected", lines[0], seconds, err)
    except Exception as err:  # noqa: BLE001 - the fuzz counts every other exception
        return Outcome("other", f"{type(err).__name__}: {str(err)[:300]}", time.perf_counter() - start, err)
    if render:
        for target in [t.name for t in sset.targets if sset.rules_for(t.name)]:
            try:
                tdsl.render(sset, target)
            except RenderError as err:
                return Outcome(
                    "verify_failure", f"{target}: {str(err).splitlines()[0][:300]}", time.perf_counter() - start, err
                )
            except Exception as err:  # noqa: BLE001
                return Outcome(
                    "other",
                    f"render {target}: {type(err).__name__}: {str(err)[:300]}",
                    time.perf_counter() - start,
                    err,
                )
    return Outcome("verified", "", time.perf_counter() - start)
