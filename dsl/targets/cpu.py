"""The llvm-cpu target: which CPU to generate code for, and the flags that select it."""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import field_validator, model_validator

from ..spec.all_of import leaves
from ..spec.base import StrategyModel, SymbolName, problem
from ..spec.codegen import Codegen, TileUsingForall
from ..spec.kinds import Backend, MatcherKind, StrategyKind
from ..spec.layout import DataLayout
from ..spec.lowering import CpuLowering
from ..spec.matchers import ConvolutionMatch

_CPU_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
_FEATURE_RE = re.compile(r"^[+-][A-Za-z0-9_.-]+$")


class CpuTarget(StrategyModel):
    """An llvm-cpu target. Emits ``--iree-hal-local-target-device-backends=llvm-cpu`` flags.

    ``cpu`` is an LLVM CPU name (``host``, ``znver4``, ``skylake-avx512``, ``generic``);
    ``features`` are LLVM feature toggles such as ``+avx512f``; ``ukernels`` selects
    ``--iree-llvmcpu-enable-ukernels`` (``none`` is required for mmt4d tiles the
    ukernel table lacks, e.g. 8x32x1 on AVX-512); ``im2col_convs`` adds
    ``--iree-global-opt-use-im2col-for-convs`` (IREE rewrites every convolution into an
    im2col + matmul during global optimization: 3x3 conv 1x56x56x64 -> 64 f32 measured
    6.5-8.4 ms vs 10.2 ms IREE default, single-threaded, on this project's AVX2 machine).

    Example::

        CpuTarget(cpu="znver4", ukernels="none")
    """

    backend: ClassVar[Backend] = Backend.LLVM_CPU
    # Named ops that are linalg.generic by the time codegen configuration runs.
    ops_gone_at_codegen: ClassVar[tuple[str, ...]] = ("linalg.conv_",)

    kind: Literal["llvm-cpu"] = "llvm-cpu"
    name: SymbolName = "cpu"
    cpu: str = "host"
    features: tuple[str, ...] = ()
    ukernels: Literal["default", "none", "mmt4d", "all"] = "default"
    im2col_convs: bool = False

    @field_validator("cpu")
    @classmethod
    def _cpu_name(cls, value: str) -> str:
        if not _CPU_RE.match(value):
            raise problem("", "an LLVM CPU name such as 'host' or 'znver4'", value)
        return value

    @field_validator("features")
    @classmethod
    def _feature_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for i, feature in enumerate(value):
            if not _FEATURE_RE.match(feature):
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
        return flags

    def baseline(self) -> "CpuTarget":
        """This CPU with IREE's own defaults (ukernels, no im2col): the reference that
        ``tdsl bench`` and ``tdsl run`` compare strategies against."""
        return self.model_copy(update={"ukernels": "default", "im2col_convs": False})

    def check_strategy(self, index: int, match: MatcherKind, strategy: StrategyKind, target_index: int) -> None:
        """Raises ``problem`` when ``strategy`` cannot work with this CPU target."""
        if isinstance(strategy, CpuLowering):
            for leaf in leaves(match):
                if isinstance(leaf, ConvolutionMatch) and leaf.batch == ((1,),):
                    raise problem(
                        f"rules[{index}].match.batch",
                        "a batch other than 1: IREE drops the compilation_info of batch-1 "
                        "convolutions on llvm-cpu (InsertBatchDimForBatchlessConv rebuilds the op)",
                        [1],
                    )
        if isinstance(strategy, DataLayout) and strategy.specialize and self.ukernels != "none":
            raise problem(
                f"targets[{target_index}].ukernels",
                "'none' when a data_layout specializes to linalg.mmt4d: IREE 3.13's mmt4d "
                "ukernel gives wrong results on graph-level mmt4d ops (max error 29 on a "
                "128x256x192 f32 matmul, any inner tile)",
                self.ukernels,
                hint=f"set CpuTarget(ukernels='none') for target {self.name!r}",
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
