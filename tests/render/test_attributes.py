"""The one attribute converter (``tdsl.bindings.attributes``): every attribute the bindings
hand out becomes a typed value; ``walk``'s flat values and a lowering config's plain
fields are read from it."""

from __future__ import annotations

from tdsl import bindings
from tdsl.bindings import CompilationInfo, LoweringConfig, MapA, Mma, Opaque, Sym, TranslationInfo, TypeA, Unit
from tdsl.bindings.attributes import plain, summary

MODULE = """\
module attributes {
  a.bool = true, a.int = 7 : i64, a.float = 2.5 : f32, a.str = "s", a.unit,
  a.ints = array<i64: 1, 2>, a.array = [1, [2, 3]], a.dict = {k = 4 : i64},
  a.type = f16, a.map = affine_map<(d0, d1) -> (d1)>, a.syms = [@f, @g::@h],
  a.mma = #iree_gpu.mma_layout<MFMA_F32_16x16x16_F16>,
  a.cpu = #iree_cpu.lowering_config<distribution = [64, 0], vector_common_parallel = [8, [32]]>,
  a.info = #iree_codegen.compilation_info<
    lowering_config = #iree_gpu.lowering_config<{workgroup = [64, 64, 0], mma_kind = #iree_gpu.mma_layout<MFMA_F32_16x16x16_F16>}>,
    translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> workgroup_size = [256, 1, 1] subgroup_size = 64>>,
  a.other = #gpu.block<x>
} {
}
"""


def _attributes() -> dict[str, bindings.Attr]:
    module = bindings.parse(MODULE)
    with bindings.context():
        attributes = module.operation.attributes
        return {str(name): bindings.convert(attributes[name]) for name in attributes}


def test_attributes_become_typed_values() -> None:
    a = _attributes()
    assert (a["a.bool"], a["a.int"], a["a.float"], a["a.str"], a["a.unit"]) == (True, 7, 2.5, "s", Unit())
    assert (a["a.ints"], a["a.array"], a["a.dict"]) == ((1, 2), (1, (2, 3)), {"k": 4})
    assert (a["a.type"], a["a.map"], a["a.syms"]) == (TypeA("f16"), MapA("(d0, d1) -> (d1)"), (Sym("f"), Sym("h")))
    assert a["a.mma"] == Mma("MFMA_F32_16x16x16_F16", False, False, "#iree_gpu.mma_layout<MFMA_F32_16x16x16_F16>")
    assert a["a.other"] == Opaque("#gpu.block<x>")
    cpu = a["a.cpu"]
    assert isinstance(cpu, LoweringConfig) and cpu.dialect == "iree_cpu"
    assert cpu.entries == {"distribution": (64, 0), "vector_common_parallel": (8, (32,))}
    info = a["a.info"]
    assert isinstance(info, CompilationInfo)
    gpu, translation = info.lowering_config, info.translation_info
    assert isinstance(gpu, LoweringConfig) and gpu.dialect == "iree_gpu" and isinstance(gpu.entries["mma_kind"], Mma)
    assert isinstance(translation, TranslationInfo)
    assert (translation.pipeline, translation.workgroup_size, translation.subgroup_size) == (
        "#iree_gpu.pipeline<TileAndFuse>",
        (256, 1, 1),
        64,
    )


def test_the_flat_and_plain_views_read_the_typed_value() -> None:
    a = _attributes()
    assert [summary(a[k]) for k in ("a.int", "a.ints", "a.syms", "a.array", "a.type", "a.unit")] == [
        7,
        (1, 2),
        ("f", "h"),
        None,
        None,
        None,
    ]
    info = a["a.info"]
    assert isinstance(info, CompilationInfo) and isinstance(info.lowering_config, LoweringConfig)
    assert info.lowering_config.fields == {
        "workgroup": (64, 64, 0),
        "mma_kind": "#iree_gpu.mma_layout<MFMA_F32_16x16x16_F16>",
    }
    assert [plain(a[k]) for k in ("a.unit", "a.map", "a.syms", "a.dict")] == [
        "unit",
        "affine_map<(d0, d1) -> (d1)>",
        ("@f", "@h"),
        {"k": 4},
    ]
