"""The one attribute converter: an attribute object of the bindings as typed Python data.

:func:`convert` turns every attribute the bindings hand out into an :data:`Attr`: plain
``bool`` / ``int`` / ``float`` / ``str``, tuples (arrays, dense integer arrays), dicts
(dictionary attributes) and the small frozen dataclasses below for the attributes tdsl
reads by their parts (``#iree_codegen.translation_info``, ``compilation_info``, lowering
configs, MMA layouts, pipeline options) or keeps as printed (types, affine maps, any
other attribute: :class:`Opaque`). The bindings' classes are recognised by their class
name, the API of the pinned compiler. :func:`summary` is the flat view of
:func:`tdsl.bindings.walk` (:data:`AttrValue`), read from the same typed value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Union

__all__ = [
    "Attr",
    "AttrValue",
    "CompilationInfo",
    "ConfigValue",
    "LoweringConfig",
    "MapA",
    "Mma",
    "Opaque",
    "PipelineOptions",
    "Sym",
    "TranslationInfo",
    "TypeA",
    "Unit",
    "convert",
    "plain",
    "summary",
]


@dataclass(frozen=True)
class Unit:
    """A unit attribute."""


@dataclass(frozen=True)
class Sym:
    """A symbol reference ``@name`` (nested references keep the leaf name)."""

    name: str


@dataclass(frozen=True)
class TypeA:
    """A type attribute, as printed (``f16``, ``tensor<?x?xf16>``)."""

    text: str


@dataclass(frozen=True)
class MapA:
    """An affine map, as printed without ``affine_map<..>``: ``(d0, d1) -> (d1)``."""

    text: str


@dataclass(frozen=True)
class Opaque:
    """Any other attribute, as printed."""

    text: str


@dataclass(frozen=True)
class Mma:
    """``#iree_gpu.mma_layout<intrinsic[, col_major = true]>`` (``virtual``: a
    ``virtual_mma_layout``)."""

    intrinsic: str
    col_major: bool
    virtual: bool
    text: str


@dataclass(frozen=True)
class PipelineOptions:
    """``#iree_gpu.pipeline_options<..>``: the options that are set (None: not set)."""

    prefetch_num_stages: Optional[int]
    no_reduce_shared_memory_bank_conflicts: Optional[bool]
    reorder_workgroups_strategy: Optional[str]
    use_igemm_convolution: Optional[bool]
    text: str


ConfigValue = Union[bool, int, float, str, tuple["ConfigValue", ...], dict[str, "ConfigValue"]]
"""A lowering-config entry as plain data (:func:`plain`): numbers, strings, tuples, dicts;
any other attribute (an MMA layout, ...) as its printed form."""


@dataclass(frozen=True)
class LoweringConfig:
    """A lowering config: ``dialect`` is ``iree_gpu`` (``#iree_gpu.lowering_config<{..}>``,
    read with its attribute class), ``iree_cpu`` or ``iree_codegen`` (no attribute class:
    the parameter list is parsed as a dictionary; empty when that fails); ``entries`` its
    typed entries; ``text`` the attribute as printed."""

    dialect: str
    entries: dict[str, "Attr"]
    text: str

    @property
    def fields(self) -> dict[str, ConfigValue]:
        """The entries as plain data (:func:`plain`)."""
        return {key: plain(value) for key, value in self.entries.items()}


@dataclass(frozen=True)
class TranslationInfo:
    """``#iree_codegen.translation_info``: the pipeline as printed
    (``#iree_gpu.pipeline<VectorDistribute>``), the codegen spec symbol, workgroup and
    subgroup sizes (empty / 0: not given) and the configuration dictionary."""

    pipeline: str
    codegen_spec: Optional[str]
    workgroup_size: tuple[int, ...] = ()
    subgroup_size: int = 0
    configuration: Optional[dict[str, "Attr"]] = None
    text: str = ""


@dataclass(frozen=True)
class CompilationInfo:
    """``#iree_codegen.compilation_info<lowering_config = .., translation_info = ..>``."""

    lowering_config: "Attr"
    translation_info: "Attr"
    text: str


Attr = Union[
    bool,
    int,
    float,
    str,
    Unit,
    Sym,
    TypeA,
    MapA,
    Opaque,
    Mma,
    PipelineOptions,
    LoweringConfig,
    TranslationInfo,
    CompilationInfo,
    tuple["Attr", ...],
    dict[str, "Attr"],
]
"""An attribute as typed data (:func:`convert`)."""

AttrValue = Union[bool, int, float, str, tuple[int, ...], tuple[str, ...], TranslationInfo, LoweringConfig, None]
"""The flat view of an attribute (:func:`summary`): numbers, strings, integer arrays, the
leaf names of an array of symbol references, translation infos and lowering configs;
None for any other attribute."""

_LOWERING_CONFIG_PREFIXES = ("#iree_cpu.lowering_config<", "#iree_codegen.lowering_config<")


def _mma(attr: Any) -> Mma:
    text = str(attr)
    name = text[text.index("<") + 1 : -1].split(",")[0].strip()
    return Mma(name, bool(getattr(attr, "col_major", False)), text.startswith("#iree_gpu.virtual_mma_layout"), text)


def _other_config(text: str, dialect: str) -> LoweringConfig:
    """A config without an attribute class: its parameter list read as a dictionary."""
    from iree.compiler import ir

    body = text[text.index("<") + 1 : -1].strip()
    try:
        entries = ir.Attribute.parse(body if body.startswith("{") else "{" + body + "}")
    except (ValueError, ir.MLIRError):
        return LoweringConfig(dialect, {}, text)
    value = convert(entries)
    return LoweringConfig(dialect, value if isinstance(value, dict) else {}, text)


def _translation(attr: Any) -> TranslationInfo:
    spec = attr.codegen_spec
    symbol = None if spec is None else convert(spec)
    configuration = None if attr.configuration is None else convert(attr.configuration)
    return TranslationInfo(
        str(attr.pass_pipeline),
        symbol.name if isinstance(symbol, Sym) else None if spec is None else str(spec),
        tuple(int(v) for v in attr.workgroup_size),
        int(attr.subgroup_size),
        configuration if isinstance(configuration, dict) else None,
        str(attr),
    )


def _pipeline_options(attr: Any) -> PipelineOptions:
    reorder = attr.reorder_workgroups_strategy
    return PipelineOptions(
        None if attr.prefetch_num_stages is None else int(attr.prefetch_num_stages),
        None
        if attr.no_reduce_shared_memory_bank_conflicts is None
        else bool(attr.no_reduce_shared_memory_bank_conflicts),
        None if reorder is None else str(reorder)[str(reorder).index("<") + 1 : -1],
        None if attr.use_igemm_convolution is None else bool(attr.use_igemm_convolution),
        str(attr),
    )


def _dense(attr: Any, kind: str) -> Attr:
    if kind.endswith("ArrayAttr"):  # DenseI64ArrayAttr, DenseBoolArrayAttr, ...
        return tuple(bool(v) if isinstance(v, bool) else int(v) for v in attr)
    if kind == "DenseIntElementsAttr":
        return tuple(int(v) for v in attr)
    if kind == "DenseFPElementsAttr" and attr.is_splat:
        from iree.compiler import ir

        return float(ir.FloatAttr(attr.get_splat_value()).value)
    return Opaque(str(attr))


def convert(attr: Any) -> Attr:
    """``attr`` (an attribute object of the bindings) as typed data; see the module
    docstring. Call inside ``with tdsl.bindings.context():``."""
    kind = type(attr).__name__
    if kind == "BoolAttr":
        return bool(attr.value)
    if kind == "IntegerAttr":
        return int(attr.value)
    if kind == "FloatAttr":
        return float(attr.value)
    if kind == "StringAttr":
        return str(attr.value)
    if kind == "UnitAttr":
        return Unit()
    if kind == "ArrayAttr":
        return tuple(convert(a) for a in attr)
    if kind.startswith("Dense"):
        return _dense(attr, kind)
    if kind == "DictAttr":
        return {str(n.name): convert(n.attr) for n in attr}
    if kind == "TypeAttr":
        return TypeA(str(attr.value))
    if kind == "AffineMapAttr":
        return MapA(str(attr.value))
    if kind == "FlatSymbolRefAttr":
        return Sym(str(attr.value))
    if kind == "SymbolRefAttr":
        return Sym(str(list(attr.value)[-1]))
    if kind == "CompilationInfoAttr":
        return CompilationInfo(convert(attr.lowering_config), convert(attr.translation_info), str(attr))
    if kind == "TranslationInfoAttr":
        return _translation(attr)
    text = str(attr)
    if kind == "LoweringConfigAttr" and text.startswith("#iree_gpu.lowering_config"):
        return LoweringConfig("iree_gpu", {str(n.name): convert(n.attr) for n in attr.attributes}, text)
    if kind in ("MMAAttr", "VirtualMMAAttr"):
        return _mma(attr)
    if kind == "PipelineOptionsAttr":
        return _pipeline_options(attr)
    for prefix in _LOWERING_CONFIG_PREFIXES:
        if text.startswith(prefix) and text.endswith(">"):
            return _other_config(text, prefix[1:].split(".")[0])
    return Opaque(text)


def plain(value: Attr) -> ConfigValue:
    """``value`` as plain data: numbers, strings, tuples and dicts as they are, any other
    attribute as printed."""
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if isinstance(value, dict):
        return {key: plain(v) for key, v in value.items()}
    if isinstance(value, Unit):
        return "unit"
    if isinstance(value, Sym):
        return f"@{value.name}"
    if isinstance(value, MapA):
        return f"affine_map<{value.text}>"
    return value.text


def summary(value: Attr) -> AttrValue:
    """The flat view of ``value`` (:data:`AttrValue`)."""
    if isinstance(value, (bool, int, float, str, TranslationInfo, LoweringConfig)):
        return value
    if isinstance(value, tuple):
        ints = tuple(v for v in value if isinstance(v, int) and not isinstance(v, bool))
        if len(ints) == len(value):
            return ints
        names = tuple(v.name for v in value if isinstance(v, Sym))
        if len(names) == len(value):
            return names
    return None
