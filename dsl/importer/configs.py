"""Reading ``#iree_codegen.compilation_info`` (and an attention op's
``decomposition_config``) into :class:`GpuLowering` / :class:`CpuLowering` fields.

Every entry of the lowering config, the translation_info and its configuration
dictionary must map to a field; an entry tdsl has no field for raises
:class:`~tdsl.importer.problems.Unsupported` naming it (``--allow-raw`` keeps the whole
attribute as a :class:`~tdsl.model.raw.RawConfig` instead). Spellings older IREE wrote
and whose meaning is clear are upgraded with a note: ``subgroup_m_count`` /
``subgroup_n_count`` with VectorDistribute (IREE 3.13 reads ``subgroup_basis``) become the
basis when the matcher fixes one M and one N loop.
"""

from __future__ import annotations

from typing import Optional

from ..bindings import Attr, CompilationInfo, LoweringConfig, Mma, PipelineOptions, TranslationInfo, Unit
from ..errors import StrategyError
from ..model.kinds import StrategyKind
from ..model.lowering import AttentionDecomposition, CpuLowering, DecomposedMatmul, GpuLowering, MmaLayout
from .problems import Unsupported

_GPU_LISTS = ("workgroup", "reduction", "subgroup", "thread", "padding", "promote_operands")
_GPU_PIPELINES = {
    "#iree_gpu.pipeline<TileAndFuse>": "TileAndFuse",
    "#iree_gpu.pipeline<VectorDistribute>": "VectorDistribute",
}
_CPU_LEVELS = CpuLowering.LEVELS


def _ints(value: Attr, what: str, line: Optional[int]) -> tuple[int, ...]:
    if not isinstance(value, tuple) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise Unsupported("transform.param.constant", line, f"{what}: a list of integers")
    return tuple(int(v) for v in value if isinstance(v, int))


def _basis(value: Attr, line: Optional[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if not isinstance(value, tuple) or len(value) != 2:
        raise Unsupported("transform.param.constant", line, "subgroup_basis: [counts, mapping]")
    return _ints(value[0], "subgroup_basis counts", line), _ints(value[1], "subgroup_basis mapping", line)


def _gpu_config(value: Attr) -> bool:
    return isinstance(value, LoweringConfig) and value.dialect == "iree_gpu"


class ConfigReader:
    """Reads configs for one rule; ``roles`` are the loop roles its matcher fixes (None:
    unknown); ``notes`` collects upgrades."""

    def __init__(self, line: Optional[int], roles: Optional[tuple[str, ...]]):
        self.line = line
        self.roles = roles
        self.notes: list[tuple[Optional[int], str]] = []

    def fail(self, missing: str) -> Unsupported:
        return Unsupported("transform.param.constant", self.line, missing)

    def strategy(self, name: str, info: Attr, decomposition: Optional[Attr]) -> StrategyKind:
        """The lowering strategy ``name`` for a compilation_info (and decomposition_config)."""
        if not isinstance(info, CompilationInfo):
            raise self.fail("a #iree_codegen.compilation_info attribute for compilation_info")
        translation = info.translation_info
        if not isinstance(translation, TranslationInfo):
            raise self.fail("a #iree_codegen.translation_info")
        config = info.lowering_config
        if isinstance(config, LoweringConfig) and config.dialect == "iree_gpu":
            return self._gpu(name, config, translation, decomposition)
        if isinstance(config, LoweringConfig) and config.dialect == "iree_cpu":
            if decomposition is not None:
                raise self.fail("decomposition_config with a CPU lowering config (tdsl has it for GPU attention only)")
            return self._cpu(name, config, translation)
        text = config.text if isinstance(config, LoweringConfig) else str(config)
        raise self.fail(
            f"a lowering config tdsl models (#iree_gpu.lowering_config or #iree_cpu.lowering_config), not {text[:80]}"
        )

    def _gpu(
        self, name: str, config: LoweringConfig, translation: TranslationInfo, decomposition: Optional[Attr]
    ) -> GpuLowering:
        fields: dict[str, object] = {"name": name}
        for key, value in config.entries.items():
            if key in _GPU_LISTS:
                fields[key] = _ints(value, key, self.line)
            elif key == "subgroup_basis":
                fields[key] = _basis(value, self.line)
            elif key == "mma_kind":
                if not isinstance(value, Mma) or value.virtual or value.col_major:
                    text = value.text if isinstance(value, Mma) else str(value)
                    raise self.fail(f"mma_kind {text}: tdsl's GpuLowering.mma_kind takes a plain #iree_gpu.mma_layout")
                fields[key] = value.intrinsic
            elif key in ("subgroup_m_count", "subgroup_n_count"):
                if not isinstance(value, int):
                    raise self.fail(f"{key}: an integer")
                fields[key] = value
            else:
                raise self.fail(f"the lowering config entry {key!r} (tdsl's GpuLowering has no field for it)")
        pipeline = _GPU_PIPELINES.get(translation.pipeline)
        if pipeline is None:
            raise self.fail(f"a GPU pipeline tdsl models (TileAndFuse, VectorDistribute), not {translation.pipeline}")
        fields["pipeline"] = pipeline
        if not translation.workgroup_size:
            raise self.fail("a translation_info with a workgroup_size")
        fields["workgroup_size"] = translation.workgroup_size
        if translation.subgroup_size:
            fields["subgroup_size"] = translation.subgroup_size
        else:
            self.notes.append((self.line, "translation_info without subgroup_size: imported as 64 (gfx942's)"))
        self._configuration(fields, translation)
        if "promote_operands" not in fields:
            fields["promote_operands"] = ()
            self.notes.append(
                (
                    self.line,
                    f"{name}: the lowering config has no promote_operands; tdsl renders promote_operands = [] (IREE 3.13 promotes nothing either way)",
                )
            )
        if decomposition is not None:
            fields["decomposition_config"] = self._decomposition(decomposition)
        self._upgrade_counts(name, fields)
        try:
            gpu: GpuLowering = GpuLowering.model_validate(fields)
            return gpu
        except StrategyError as err:
            raise self.fail(f"a GPU config tdsl accepts ({err})") from None

    def _configuration(self, fields: dict[str, object], translation: TranslationInfo) -> None:
        for key, value in (translation.configuration or {}).items():
            if key == "gpu_pipeline_options" and isinstance(value, PipelineOptions):
                for option in (
                    "prefetch_num_stages",
                    "no_reduce_shared_memory_bank_conflicts",
                    "reorder_workgroups_strategy",
                    "use_igemm_convolution",
                ):
                    if getattr(value, option) is not None:
                        fields[option] = getattr(value, option)
            elif (
                key == "llvm_func_attrs" and isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
            ):
                fields["llvm_func_attrs"] = dict(value)
            else:
                raise self.fail(
                    f"the translation_info configuration entry {key!r} (tdsl models gpu_pipeline_options and llvm_func_attrs)"
                )

    def _upgrade_counts(self, name: str, fields: dict[str, object]) -> None:
        """VectorDistribute with ``subgroup_m_count`` / ``subgroup_n_count`` and no basis (what
        IREE before subgroup_basis read): the basis with those counts on the M and N loop."""
        if (
            fields.get("pipeline") != "VectorDistribute"
            or "subgroup_basis" in fields
            or "subgroup_m_count" not in fields
        ):
            return
        roles = self.roles
        workgroup = fields.get("workgroup", ())
        assert isinstance(workgroup, tuple)  # _ints read it
        if roles is None or len(roles) != len(workgroup) or roles.count("m") != 1 or roles.count("n") != 1:
            raise self.fail(
                "subgroup_m_count / subgroup_n_count with VectorDistribute: IREE 3.13 reads subgroup_basis, and the "
                "matcher does not fix one M and one N loop to place the counts on"
            )
        counts = tuple(
            fields["subgroup_m_count"] if r == "m" else fields["subgroup_n_count"] if r == "n" else 1 for r in roles
        )
        fields["subgroup_basis"] = (counts, tuple(range(len(roles))))
        del fields["subgroup_m_count"], fields["subgroup_n_count"]
        self.notes.append(
            (
                self.line,
                f"{name}: subgroup_m_count / subgroup_n_count (IREE before 3.x) upgraded to subgroup_basis {[list(counts), list(range(len(roles)))]}",
            )
        )

    def _decomposition(self, value: Attr) -> AttentionDecomposition:
        if not isinstance(value, dict):
            raise self.fail("decomposition_config: a dictionary {qk_attrs = .., pv_attrs = ..}")
        parts: dict[str, DecomposedMatmul] = {}
        for key, part in value.items():
            if key not in ("qk_attrs", "pv_attrs"):
                raise self.fail(f"the decomposition_config entry {key!r} (tdsl models qk_attrs and pv_attrs)")
            tag = f"attention_{key[:2]}_matmul"
            if (
                not isinstance(part, dict)
                or set(part) - {tag} != {"lowering_config"}
                or (tag in part and not isinstance(part[tag], Unit))
                or not _gpu_config(part["lowering_config"])
            ):
                raise self.fail(
                    f"decomposition_config.{key}: exactly {{[{tag}, ]lowering_config = #iree_gpu.lowering_config<..>}}"
                )
            config = part["lowering_config"]
            assert isinstance(config, LoweringConfig)
            fields: dict[str, object] = {"tagged": True} if tag in part else {}
            for entry, entry_value in config.entries.items():
                if entry == "mma_kind" and isinstance(entry_value, Mma):
                    fields[entry] = MmaLayout(intrinsic=entry_value.intrinsic, col_major=entry_value.col_major)
                elif entry == "subgroup_basis":
                    fields[entry] = _basis(entry_value, self.line)
                elif entry == "promote_operands":
                    fields[entry] = _ints(entry_value, entry, self.line)
                else:
                    raise self.fail(
                        f"decomposition_config.{key} entry {entry!r} (tdsl models mma_kind, subgroup_basis, promote_operands)"
                    )
            parts[key[:2]] = DecomposedMatmul.model_validate(fields)
        decomposition: AttentionDecomposition = AttentionDecomposition.model_validate(parts)
        return decomposition

    def _cpu(self, name: str, config: LoweringConfig, translation: TranslationInfo) -> CpuLowering:
        fields: dict[str, object] = {"name": name}
        for key, value in config.entries.items():
            if key not in _CPU_LEVELS:
                raise self.fail(
                    f"the CPU lowering config entry {key!r} (tdsl's CpuLowering has the levels {', '.join(_CPU_LEVELS)})"
                )
            fields[key] = _ints(value, key, self.line)
        pipeline = translation.pipeline
        if not (pipeline.startswith("#iree_cpu.pipeline<") and pipeline.endswith(">")):
            raise self.fail(f"a CPU pipeline (#iree_cpu.pipeline<..>), not {pipeline}")
        fields["pipeline"] = pipeline[len("#iree_cpu.pipeline<") : -1]
        if translation.workgroup_size or translation.subgroup_size or translation.configuration:
            raise self.fail(
                "a CPU translation_info with only a pipeline (tdsl's CpuLowering has no sizes or configuration)"
            )
        try:
            cpu: CpuLowering = CpuLowering.model_validate(fields)
            return cpu
        except StrategyError as err:
            raise self.fail(f"a CPU config tdsl accepts ({err})") from None
