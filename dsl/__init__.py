"""tdsl: declarative Python strategies rendered to verified IREE transform-dialect scripts.

Author a :class:`StrategySet` of rules (matcher -> strategy -> target), then:

* :func:`load` / :func:`dump` -- read a strategy file (.py, .yaml, .json) / write YAML or JSON;
* :func:`render` -- verified scripts and the ``iree-compile`` flags that inject them;
* :func:`compile` -- compile a payload with them and report which rules applied where;
* :func:`run` -- compile with and without them, run on CPU and compare the numbers;
* :func:`bench` -- time them against IREE's default and data-tiling paths and numpy;
* :func:`combine` -- join sets and rule lists with a stated precedence;
* :func:`import_spec` -- an existing transform-dialect spec as an editable set.

Layers (see ARCHITECTURE.md): :mod:`tdsl.model` (the strategy model), :mod:`tdsl.targets`
(per-target facts and checks), :mod:`tdsl.render`, :mod:`tdsl.programs` (loading
programs), :mod:`tdsl.compiler` (driving ``iree-compile``), :mod:`tdsl.measure` (running and timing),
:mod:`tdsl.testing` (the pytest plugin) and :mod:`tdsl.cli`.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

# Last: the ready library registers its tuning spaces with tdsl.tune.ready, and its modules
# import the ones above (never this package).
from . import strategies as strategies  # noqa: E402,F401
from .compiler.compile import compile
from .errors import RenderError, StrategyError, StrategyFileError, TdslError
from .importer import SpecImportError, import_spec, import_specs, write_python
from .measure.bench import bench
from .measure.run import run
from .model.all_of import AllOf
from .model.call_replacement import CallReplacement
from .model.codegen import Codegen, Fuse, GpuThreads, MmaChain, TileUsingFor, TileUsingForall, VectorLowering
from .model.kernel_rewrite import KernelRewrite
from .model.layout import DataLayout, Pack, PackGreedily, PackTranspose
from .model.lowering import (
    AttentionDecomposition,
    CpuLowering,
    DecomposedMatmul,
    GpuLowering,
    GraphCpuLowering,
    MmaLayout,
)
from .model.matchers import (
    AttentionMatch,
    ConsumerMatch,
    ContractionMatch,
    ConvolutionMatch,
    DagMatch,
    DimConstraint,
    FunctionMatch,
    NoLoweringConfigMatch,
    OperandMatch,
    OpNameMatch,
    PackMatch,
    ProducerMatch,
)
from .model.raw import RawAnnotation, RawCodegenAction, RawConfig, RawMatch, RawPreprocessingAction, RawTuningAction
from .model.registry import Strategy
from .render import Rendered, Script, render
from .sets.loader import dump, load
from .sets.strategy_set import Rule, StrategySet, combine
from .targets import GFX942, AmdGpuTarget, CpuTarget

try:
    __version__ = version("tdsl")
except PackageNotFoundError:  # running from a checkout that is not installed
    __version__ = "0+unknown"

__all__ = [
    "AttentionMatch",
    "DagMatch",
    "DimConstraint",
    "NoLoweringConfigMatch",
    "OperandMatch",
    "RawAnnotation",
    "RawCodegenAction",
    "RawConfig",
    "RawMatch",
    "RawPreprocessingAction",
    "RawTuningAction",
    "AttentionDecomposition",
    "DecomposedMatmul",
    "MmaLayout",
    "SpecImportError",
    "import_spec",
    "import_specs",
    "write_python",
    "GFX942",
    "AllOf",
    "AmdGpuTarget",
    "Codegen",
    "ConsumerMatch",
    "ProducerMatch",
    "ContractionMatch",
    "ConvolutionMatch",
    "CpuLowering",
    "GraphCpuLowering",
    "CpuTarget",
    "DataLayout",
    "CallReplacement",
    "KernelRewrite",
    "FunctionMatch",
    "Fuse",
    "GpuLowering",
    "GpuThreads",
    "MmaChain",
    "OpNameMatch",
    "Pack",
    "PackGreedily",
    "PackMatch",
    "PackTranspose",
    "RenderError",
    "Rendered",
    "Rule",
    "Script",
    "Strategy",
    "StrategyError",
    "StrategyFileError",
    "StrategySet",
    "TdslError",
    "TileUsingFor",
    "TileUsingForall",
    "VectorLowering",
    "__version__",
    "bench",
    "combine",
    "compile",
    "dump",
    "load",
    "render",
    "run",
]
