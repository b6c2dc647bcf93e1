"""One declaration per transform op that a strategy field renders to and ``tdsl import``
reads back.

A :class:`TransformOp` names the op and declares its attributes in the order the op's
assembly prints them; each :class:`OpAttribute` ties a field of the strategy value (the
model field, e.g. ``PackGreedily.matmul_packed_sizes``) to the attribute's name on the
parsed op (``static_matmul_packed_sizes``), how the assembly spells it
(``" matmul_packed_sizes = {}"``) and its :class:`AttrKind`.

* Render: a planner calls :meth:`TransformOp.spell` with the field values and hands the
  result (:class:`SpelledOp`: the op's name and its attributes as printed) to the
  template, which lays out the handles, types and location around it.
* Import: :meth:`TransformOp.read` gives the field values back from a parsed op's typed
  attributes (:data:`tdsl.bindings.Attr`), :meth:`TransformOp.build` the model value.

Each attribute is declared once, so a rendered op reads back into the value it was
rendered from (``tests/render/test_transform_ops.py`` renders and imports every op of
:data:`TRANSFORM_OPS`). An attribute whose field the op's model lacks
(``subgroup_size`` of the thread mapping) is a target fact: rendered, not read back.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Mapping, Optional, TypeVar

from ..bindings import Attr, Mma, Opaque
from ..errors import TdslError
from ..model.base import StrategyModel
from ..model.codegen import Codegen, GpuThreads, MmaChain, TileUsingFor, TileUsingForall, VectorLowering
from ..model.layout import DataLayout, Pack, PackGreedily, PackTranspose

Model = TypeVar("Model", bound=StrategyModel)


class AttrKind(Enum):
    """How an attribute's value is printed and read back."""

    INTS = "ints"
    """An i64 array: ``[1, 2]``; read from a tuple of integers."""
    INT = "int"
    """An integer: ``4``."""
    ENUM = "enum"
    """An enum case printed by name (:attr:`OpAttribute.cases`), read as its integer value."""
    GPU_MAPPING = "gpu_mapping"
    """``[#gpu.block<y>, #gpu.thread<x>]`` from the names ``block_y``, ``thread_x``."""
    MMA_LAYOUT = "mma_layout"
    """``#iree_gpu.mma_layout<MFMA_F32_16x16x16_F16>`` from the intrinsic's name."""


class OpAttributeError(TdslError):
    """A parsed op's attribute is missing or not of its declared kind; ``expected`` says
    what was expected and what was found."""

    def __init__(self, op: str, attribute: str, expected: str):
        super().__init__(f"{op} {attribute}: {expected}")
        self.op = op
        self.attribute = attribute
        self.expected = expected


@dataclass(frozen=True)
class OpAttribute:
    """One attribute of a transform op: the model ``field`` it holds, its ``name`` on the
    parsed op, its spelling ``form`` (``{}`` is the value; the form carries its own leading
    separator) and its ``kind``. An ``optional`` attribute is not printed for None and
    reads back as None when it is absent or empty."""

    field: str
    name: str
    form: str
    kind: AttrKind = AttrKind.INTS
    optional: bool = False
    cases: tuple[str, ...] = ()
    """ENUM: the case names in the order of their integer values."""

    def text(self, value: object) -> str:
        """``value`` as the op's assembly prints it."""
        if self.kind is AttrKind.INTS:
            assert isinstance(value, tuple)
            return "[" + ", ".join(str(int(v)) for v in value) + "]"
        if self.kind is AttrKind.GPU_MAPPING:
            assert isinstance(value, tuple)
            return "[" + ", ".join("#gpu.{}<{}>".format(*str(m).split("_")) for m in value) + "]"
        if self.kind is AttrKind.MMA_LAYOUT:
            return f"#iree_gpu.mma_layout<{value}>"
        return str(value)

    def value(self, op: str, found: Optional[Attr]) -> object:
        """The field value of the parsed attribute ``found`` (None: the op has none)."""
        if self.optional and (found is None or found == ()):
            return None
        if self.kind is AttrKind.INTS and isinstance(found, tuple) and all(_is_int(v) for v in found):
            return tuple(v for v in found if isinstance(v, int))
        if self.kind is AttrKind.INT and isinstance(found, int) and _is_int(found):
            return found
        if self.kind is AttrKind.ENUM and isinstance(found, int) and 0 <= found < len(self.cases):
            return self.cases[found]
        if self.kind is AttrKind.GPU_MAPPING and isinstance(found, tuple):
            names = [_mapping_name(entry) for entry in found]
            if all(names):
                return tuple(names)
        if self.kind is AttrKind.MMA_LAYOUT and isinstance(found, Mma) and not found.virtual and not found.col_major:
            return found.intrinsic
        raise OpAttributeError(op, self.name, f"{_EXPECTED[self.kind]}, not {_shown(found)}")


_EXPECTED = {
    AttrKind.INTS: "a list of integers",
    AttrKind.INT: "an integer",
    AttrKind.ENUM: "one of the enum's cases",
    AttrKind.GPU_MAPPING: "a list of #gpu.block / thread / warp mappings",
    AttrKind.MMA_LAYOUT: "an #iree_gpu.mma_layout intrinsic",
}


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _mapping_name(entry: Attr) -> str:
    """``block_y`` for ``#gpu.block<y>``; empty for anything else."""
    text = entry.text if isinstance(entry, Opaque) else ""
    if not text.startswith("#gpu.") or "<" not in text or not text.endswith(">"):
        return ""
    return f"{text[len('#gpu.') : text.index('<')]}_{text[text.index('<') + 1 : -1]}"


def _shown(found: Optional[Attr]) -> str:
    if found is None:
        return "no attribute"
    return getattr(found, "text", None) or repr(found)


@dataclass(frozen=True)
class SpelledOp:
    """A transform op as a template prints it: its ``name`` and its ``attributes`` as
    printed (empty, or starting with their separator)."""

    name: str
    attributes: str = ""


@dataclass(frozen=True)
class TransformOp:
    """A transform op tdsl renders from a strategy value (``model``) and reads back; see the
    module docstring."""

    name: str
    model: type[StrategyModel]
    attributes: tuple[OpAttribute, ...] = ()

    def spell(self, values: Mapping[str, object]) -> SpelledOp:
        """The op with the attributes of ``values`` (field -> value; a pydantic model as
        ``dict(model)``) spelled in declaration order."""
        parts = []
        for attribute in self.attributes:
            value = values[attribute.field]
            if value is None and attribute.optional:
                continue
            parts.append(attribute.form.format(attribute.text(value)))
        return SpelledOp(self.name, "".join(parts))

    def read(self, attrs: Mapping[str, Attr]) -> dict[str, object]:
        """The field values of the parsed op's attributes ``attrs`` (raises
        :class:`OpAttributeError`)."""
        return {a.field: a.value(self.name, attrs.get(a.name)) for a in self.attributes}

    def build(self, model: type[Model], attrs: Mapping[str, Attr], **given: object) -> Model:
        """``model`` (this op's model or a subclass) from the parsed attributes that are its
        fields and the fields ``given`` (those the op's operands decide)."""
        fields = {k: v for k, v in self.read(attrs).items() if k in model.model_fields}
        built: Model = model.model_validate({**fields, **given})
        return built


GENERALIZE = TransformOp("transform.structured.generalize", DataLayout)
INTERCHANGE = TransformOp(
    "transform.structured.interchange",
    DataLayout,
    (OpAttribute("interchange", "iterator_interchange", " iterator_interchange = {}"),),
)
PACK_GREEDILY = TransformOp(
    "transform.structured.pack_greedily",
    PackGreedily,
    (
        OpAttribute("matmul_packed_sizes", "static_matmul_packed_sizes", " matmul_packed_sizes = {}"),
        OpAttribute(
            "matmul_padded_sizes_next_multiple_of",
            "matmul_padded_sizes_next_multiple_of",
            " matmul_padded_sizes_next_multiple_of = {}",
            optional=True,
        ),
        OpAttribute("matmul_inner_dims_order", "matmul_inner_dims_order", " matmul_inner_dims_order = {}"),
    ),
)
PACK = TransformOp(
    "transform.structured.pack", Pack, (OpAttribute("packed_sizes", "static_packed_sizes", " packed_sizes = {}"),)
)
PACK_TRANSPOSE = TransformOp(
    "transform.structured.pack_transpose",
    PackTranspose,
    (
        OpAttribute("outer_perm", "outer_perm", " outer_perm = {}", optional=True),
        OpAttribute("inner_perm", "inner_perm", " inner_perm = {}", optional=True),
    ),
)
SPECIALIZE = TransformOp("transform.structured.specialize", DataLayout)
LOWER_PACK = TransformOp("transform.structured.lower_pack", DataLayout)
LOWER_UNPACK = TransformOp("transform.structured.lower_unpack", DataLayout)

TILE_USING_FORALL = TransformOp(
    "transform.structured.tile_using_forall",
    TileUsingForall,
    (
        OpAttribute("tile_sizes", "static_tile_sizes", " tile_sizes {}", optional=True),
        OpAttribute("num_threads", "static_num_threads", " num_threads {}", optional=True),
        OpAttribute("mapping", "mapping", " (mapping = {})", AttrKind.GPU_MAPPING),
    ),
)
TILE_USING_FOR = TransformOp(
    "transform.structured.tile_using_for",
    TileUsingFor,
    (
        OpAttribute("tile_sizes", "static_sizes", " tile_sizes {}"),
        OpAttribute("interchange", "static_interchange", " interchange = {}", optional=True),
    ),
)
PROMOTE_OPERANDS = TransformOp(
    "transform.iree.promote_operands", Codegen, (OpAttribute("promote_operands", "indices", " {}"),)
)
CONVERT_TO_MULTI_MMA = TransformOp(
    "transform.iree.convert_to_multi_mma",
    MmaChain,
    (OpAttribute("intrinsic", "intrinsic_kind", ", kind({})", AttrKind.MMA_LAYOUT),),
)
MAP_NESTED_FORALL_TO_GPU_THREADS = TransformOp(
    "transform.iree.map_nested_forall_to_gpu_threads",
    GpuThreads,
    (
        OpAttribute("workgroup_dims", "workgroup_dims", " workgroup_dims = {}"),
        OpAttribute("subgroup_size", "subgroup_size", " subgroup_size = {}", AttrKind.INT),
    ),
)
LOWER_CONTRACTION = TransformOp(
    "transform.apply_patterns.vector.lower_contraction",
    VectorLowering,
    (
        OpAttribute(
            "contraction",
            "lowering_strategy",
            " lowering_strategy = {}",
            AttrKind.ENUM,
            cases=("dot", "llvmintr", "outerproduct", "parallelarith"),
        ),
    ),
)
LOWER_TRANSPOSE = TransformOp(
    "transform.apply_patterns.vector.lower_transpose",
    VectorLowering,
    (
        OpAttribute(
            "transpose",
            "lowering_strategy",
            " lowering_strategy = {}",
            AttrKind.ENUM,
            cases=("eltwise", "llvmintr", "shuffle_1d", "shuffle_16x16"),
        ),
    ),
)
LOWER_TRANSFER = TransformOp(
    "transform.apply_patterns.vector.lower_transfer",
    VectorLowering,
    (OpAttribute("transfer_max_rank", "max_transfer_rank", " max_transfer_rank = {}", AttrKind.INT),),
)

TRANSFORM_OPS: dict[str, TransformOp] = {
    op.name: op
    for op in (
        GENERALIZE,
        INTERCHANGE,
        PACK_GREEDILY,
        PACK,
        PACK_TRANSPOSE,
        SPECIALIZE,
        LOWER_PACK,
        LOWER_UNPACK,
        TILE_USING_FORALL,
        TILE_USING_FOR,
        PROMOTE_OPERANDS,
        CONVERT_TO_MULTI_MMA,
        MAP_NESTED_FORALL_TO_GPU_THREADS,
        LOWER_CONTRACTION,
        LOWER_TRANSPOSE,
        LOWER_TRANSFER,
    )
}
"""Every declared op by name."""

CLEANUP_PATTERNS: dict[str, str] = {
    "tiling_canonicalization": "transform.apply_patterns.linalg.tiling_canonicalization",
    "for_loop_canonicalization": "transform.apply_patterns.scf.for_loop_canonicalization",
    "canonicalization": "transform.apply_patterns.canonicalization",
}
"""``Codegen.cleanup`` entry -> the pattern op it renders."""
