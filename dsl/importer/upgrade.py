"""Specs written for older IREE: spellings IREE 3.13 no longer parses, upgraded where the
meaning is clear (each upgrade is a note naming its line), refused with the line where not.

The spec is parsed with the bindings; when IREE 3.13 reports a diagnostic that one of the
rules below recognises, the construct at the diagnostic's position is rewritten and the
spec parsed again. The rewrites stay on their line, so every later line number is the
original file's:

* ``translation_info<LLVMGPUVectorDistribute ..>`` and ``translation_info<pipeline =
  CPUDoubleTilingExpert ..>`` (the pipeline as a bare enum, before 3.x): the pipeline
  attribute ``pipeline = #iree_gpu.pipeline<VectorDistribute>`` / ``#iree_cpu.pipeline<..>``;
* ``#iree_gpu.pipeline_options<prefetch_shared_memory = true>`` (before IREE's
  ``prefetch_num_stages``, Dec 2025): ``prefetch_num_stages = 2`` (``false``: 0);
* an op's properties written in its attribute dictionary (``transform.get_parent_op %x
  {op_name = "func.func"}``): wrapped in ``<{..}>``;
* an op's required properties written as its attribute dictionary over several lines
  (``iree_linalg_ext.attention {indexing_maps = [..]}`` in a DAG region): wrapped in ``<{..}>``;
* ``transform.print {name = ".."}``: ``transform.print name = ".."``;
* ``transform.match.structured.dim %op[-1] {reduction}`` (the loop kind as an attribute):
  ``.. %op[-1] reduction`` (``parallel`` alike);
* MMA intrinsics in the old operand-first order (``MFMA_F16_16x16x16_F32``): the 3.13 name
  (``MFMA_F32_16x16x16_F16``) when IREE lists it;
* an action that sets a SPIR-V pipeline (``translation_info<SPIRVBaseVectorize>``, which
  has no llvm-cpu or rocm counterpart) in a spec with other rules: that action and its
  ``foreach_match`` pairs are left out (blank lines), with a warning naming them.

A spec whose only rules are SPIR-V's, other pipelines tdsl does not target, and every other
parse error, are refused with the line and IREE's message.
"""

from __future__ import annotations

import re
from typing import Callable, Optional

from .. import bindings
from ..errors import Diagnostic, ParseFailure
from .problems import Note, SpecImportError

GPU_PIPELINES = {
    "LLVMGPUVectorDistribute": "#iree_gpu.pipeline<VectorDistribute>",
    "LLVMGPUTileAndFuse": "#iree_gpu.pipeline<TileAndFuse>",
    "LLVMGPUDefault": "#iree_gpu.pipeline<Default>",
    "LLVMGPUBaseLowering": "#iree_gpu.pipeline<BaseLowering>",
    "LLVMGPUDistribute": "#iree_gpu.pipeline<Distribute>",
    "LLVMGPUVectorize": "#iree_gpu.pipeline<Vectorize>",
    "LLVMGPUWinogradVectorize": "#iree_gpu.pipeline<WinogradVectorize>",
    "CPUDefault": "#iree_cpu.pipeline<Default>",
    "CPUDoubleTilingExpert": "#iree_cpu.pipeline<DoubleTilingExpert>",
    "CPUConvTileAndDecomposeExpert": "#iree_cpu.pipeline<ConvTileAndDecomposeExpert>",
    "Mmt4dTilingExpert": "#iree_cpu.pipeline<Mmt4dTilingExpert>",
    "CPUBufferOpsTileAndVectorize": "#iree_cpu.pipeline<BufferOpsTileAndVectorize>",
    "CPUDataTiling": "#iree_cpu.pipeline<DataTiling>",
    "CPULinalgExtTileAndVectorize": "#iree_cpu.pipeline<LinalgExtTileAndVectorize>",
    "TransformDialectCodegen": "#iree_codegen.transform_dialect_codegen",
    "None": "#iree_codegen.no_pipeline",
}
"""Pre-3.x ``DispatchLoweringPassPipeline`` names -> the 3.13 pipeline attributes."""

MAX_UPGRADES = 10000


def _offset(text: str, line: int, column: int) -> int:
    """The index of (1-based) ``line``, ``column`` in ``text``."""
    start = 0
    for _ in range(line - 1):
        start = text.index("\n", start) + 1
    return start + column - 1


def _word(text: str, i: int) -> tuple[int, int]:
    """The identifier at or after index ``i`` (skipping blanks): (start, end)."""
    while i < len(text) and text[i] in " \t":
        i += 1
    j = i
    while j < len(text) and (text[j].isalnum() or text[j] == "_"):
        j += 1
    return i, j


def _balanced(text: str, i: int, open_: str, close: str) -> int:
    """The index after the bracket that closes ``text[i] == open_`` (strings skipped)."""
    depth = 0
    j = i
    while j < len(text):
        c = text[j]
        if c == '"':
            j += 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
        elif c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return -1


Fix = Callable[[str, Diagnostic], Optional[tuple[str, str]]]


def _pipeline(text: str, d: Diagnostic) -> Optional[tuple[str, str]]:
    """The pipeline as a bare enum: ``<LLVMGPUTileAndFuse ..`` or ``pipeline = LLVMGPU..``."""
    bare = d.message == "expected 'pipeline'"
    if not (bare or d.message == "expected attribute value" or "parameter 'passPipeline'" in d.message):
        return None
    assert d.line is not None and d.column is not None
    start, end = _word(text, _offset(text, d.line, d.column))
    name = text[start:end]
    new = GPU_PIPELINES.get(name)
    if new is None:
        return None
    if not bare:
        before = text[:start].rstrip()
        if not before.endswith("pipeline ="):
            return None
    replacement = ("pipeline = " if bare else "") + new
    return text[:start] + replacement + text[
        end:
    ], f"translation_info pipeline {name} (before IREE 3.x) upgraded to {new}"


def _prefetch(text: str, d: Diagnostic) -> Optional[tuple[str, str]]:
    if "unknown struct parameter name: prefetch_shared_memory" not in d.message:
        return None
    assert d.line is not None and d.column is not None
    line_start = _offset(text, d.line, 1)
    line_end = text.find("\n", line_start)
    line_end = len(text) if line_end < 0 else line_end
    at = text.find("prefetch_shared_memory", line_start, line_end)
    if at < 0:
        return None
    j = at + len("prefetch_shared_memory")
    rest = text[j:line_end].lstrip()
    if not rest.startswith("="):
        return None
    k = j + text[j:line_end].index("=") + 1
    start, end = _word(text, k)
    value = text[start:end]
    if value not in ("true", "false"):
        return None
    stages = "2" if value == "true" else "0"
    return (
        text[:at] + f"prefetch_num_stages = {stages}" + text[end:],
        f"pipeline option prefetch_shared_memory = {value} (before IREE's prefetch_num_stages) upgraded to prefetch_num_stages = {stages}",
    )


def _properties(text: str, d: Diagnostic) -> Optional[tuple[str, str]]:
    if "cannot be parsed from attr-dict when strict properties" not in d.message:
        return None
    assert d.line is not None and d.column is not None
    i = _offset(text, d.line, d.column)
    if i >= len(text) or text[i] != "{":
        return None
    end = _balanced(text, i, "{", "}")
    if end < 0 or "\n" in text[i:end]:
        return None
    op = d.message.split("'")[1] if d.message.count("'") >= 2 else "the op"
    return text[:i] + "<" + text[i:end] + ">" + text[
        end:
    ], f"{op}: properties written as attributes {text[i:end]} upgraded to <{text[i:end]}>"


_OP_THEN_DICT = re.compile(r"([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+)\s*\{")


def _missing_properties(text: str, d: Diagnostic) -> Optional[tuple[str, str]]:
    """An op whose required properties are written as its attribute dictionary, over several
    lines (``iree_linalg_ext.attention {indexing_maps = [..]}`` in a DAG region): wrapped in
    ``<{..}>`` (no line added)."""
    if "properties dictionary is missing required attribute:" not in d.message:
        return None
    assert d.line is not None and d.column is not None
    i = _offset(text, d.line, d.column)
    line_end = text.find("\n", i)
    found = _OP_THEN_DICT.search(text, i, len(text) if line_end < 0 else line_end)
    if found is None:
        return None
    start = found.end() - 1
    end = _balanced(text, start, "{", "}")
    missing = d.message.rsplit(":", 1)[1].strip()
    if end < 0 or not re.match(r"\{\s*" + re.escape(missing) + r"\s*=", text[start:end]):
        return None
    return (
        text[:start] + "<" + text[start:end] + ">" + text[end:],
        f"{found.group(1)}: properties written as attributes {{{missing} = ..}} upgraded to <{{{missing} = ..}}>",
    )


def _print_name(text: str, d: Diagnostic) -> Optional[tuple[str, str]]:
    """``transform.print {name = ".."}`` (the name as an attribute, before its keyword
    syntax): ``transform.print name = ".."``."""
    if "'transform.print' inherent attribute 'name'" not in d.message:
        return None
    assert d.line is not None and d.column is not None
    i = _offset(text, d.line, d.column)
    if i >= len(text) or text[i] != "{":
        return None
    end = _balanced(text, i, "{", "}")
    inner = text[i + 1 : end - 1].strip() if end > 0 else ""
    if not re.fullmatch(r'name\s*=\s*"(?:[^"\\\n]|\\.)*"', inner):
        return None
    return text[:i] + inner + text[end:], f"transform.print: {{{inner}}} (the name as an attribute) upgraded to {inner}"


def _dim_kind(text: str, d: Diagnostic) -> Optional[tuple[str, str]]:
    """``transform.match.structured.dim %op[..] {reduction}`` (the loop kind as an attribute,
    before its keyword syntax): ``.. %op[..] reduction`` (``parallel`` alike)."""
    found = re.search(r"'transform\.match\.structured\.dim' inherent attribute '(parallel|reduction)'", d.message)
    if found is None or d.line is None or d.column is None:
        return None
    i = _offset(text, d.line, d.column)
    kind = found.group(1)
    written = re.match(r"\{\s*" + kind + r"\s*\}", text[i:])
    if written is None:
        return None
    return (
        text[:i] + kind + text[i + written.end() :],
        f"transform.match.structured.dim: {{{kind}}} (the loop kind as an attribute) upgraded to {kind}",
    )


def _mma(text: str, d: Diagnostic) -> Optional[tuple[str, str]]:
    if "MMAIntrinsic to be one of:" not in d.message:
        return None
    assert d.line is not None and d.column is not None
    start, end = _word(text, _offset(text, d.line, d.column))
    name = text[start:end]
    parts = name.split("_")
    if len(parts) != 4:
        return None
    new = "_".join([parts[0], parts[3], parts[2], parts[1]])
    listed = d.message.split("one of:", 1)[1]
    if (
        f" {new}," not in listed + ","
        and f" {new}" != listed.strip()
        and new not in [x.strip() for x in listed.split(",")]
    ):
        return None
    return text[:start] + new + text[end:], f"MMA intrinsic {name} (operand-first name of older IREE) upgraded to {new}"


def _unknown_pipeline(text: str, d: Diagnostic) -> str:
    """What to change where a bare pipeline name has no 3.13 attribute tdsl knows (SPIR-V's,
    say): empty for any other diagnostic."""
    if d.message != "expected 'pipeline'" or d.line is None or d.column is None:
        return ""
    start, end = _word(text, _offset(text, d.line, d.column))
    name = text[start:end]
    if not name or name in GPU_PIPELINES:
        return ""
    return (
        f" (translation_info<{name}>: a pipeline of an older IREE with no llvm-cpu or rocm counterpart; "
        "write pipeline = #iree_gpu.pipeline<..> or #iree_cpu.pipeline<..>)"
    )


_SEQUENCE = re.compile(r"transform\.named_sequence\s+@([\w$.]+)\s*\(")


def _sequence_around(text: str, i: int) -> Optional[tuple[str, int, int]]:
    """The ``transform.named_sequence`` whose body holds index ``i``: (name, start, end)."""
    for found in reversed(list(_SEQUENCE.finditer(text, 0, i))):
        args_end = _balanced(text, found.end() - 1, "(", ")")
        body = text.find("{", args_end) if args_end > 0 else -1
        if body < 0 or body > i or "}" in text[args_end:body]:
            continue
        end = _balanced(text, body, "{", "}")
        if end > i:
            return found.group(1), found.start(), end
    return None


def _blank(text: str, start: int, end: int) -> str:
    """``text`` with ``text[start:end]`` removed but its line breaks (the line numbers stay)."""
    return text[:start] + "\n" * text.count("\n", start, end) + text[end:]


def _spirv_action(text: str, d: Diagnostic) -> Optional[tuple[str, str]]:
    """An action that sets a SPIR-V pipeline (``translation_info<SPIRVBaseVectorize>``):
    left out with the ``foreach_match`` pairs that run it, when other pairs remain."""
    if d.message != "expected 'pipeline'" or d.line is None or d.column is None:
        return None
    at = _offset(text, d.line, d.column)
    start, end = _word(text, at)
    name = text[start:end]
    around = _sequence_around(text, at) if name.startswith("SPIRV") else None
    if around is None:
        return None
    action, seq_start, seq_end = around
    pair = re.compile(r"(,\s*)?@([\w$.]+)\s*->\s*@" + re.escape(action) + r"(?![\w$.])(\s*,)?")
    pairs = [m for m in pair.finditer(text) if not seq_start <= m.start() < seq_end]
    if not pairs:
        return None
    # each pair with one comma (the one before it, else the one after it), and the action
    cuts = [(m.start(), m.end() - len(m.group(3) or "")) if m.group(1) else (m.start(2) - 1, m.end()) for m in pairs]
    out = text
    for cut in sorted([*cuts, (seq_start, seq_end)], reverse=True):
        out = _blank(out, *cut)
    if not re.search(r"@[\w$.]+\s*->\s*@", out):
        return None
    matchers = ", ".join(f"@{m.group(2)}" for m in pairs)
    return out, (
        f"warning: @{action} sets translation_info<{name}>, a SPIR-V pipeline with no llvm-cpu or rocm "
        f"counterpart: it and its pairs ({matchers} -> @{action}) are not imported"
    )


FIXES: tuple[Fix, ...] = (
    _pipeline,
    _prefetch,
    _print_name,
    _dim_kind,
    _properties,
    _missing_properties,
    _mma,
    _spirv_action,
)


def upgrade(text: str, path: str) -> tuple[str, list[Note]]:
    """``text`` parsed with IREE 3.13 after the upgrades above; the notes name each one.
    Raises :class:`SpecImportError` with the line of the first construct it cannot parse."""
    notes: list[Note] = []
    for _ in range(MAX_UPGRADES):
        try:
            bindings.parse(text)
            return text, notes
        except ParseFailure as failure:
            first = failure.diagnostics[0] if failure.diagnostics else Diagnostic(str(failure), None, None, None)
            fixed = None
            if first.line is not None and first.column is not None:
                for candidate in failure.diagnostics:
                    if candidate.line != first.line:
                        continue
                    for fix in FIXES:
                        fixed = fix(text, candidate)
                        if fixed is not None:
                            break
                    if fixed is not None:
                        break
            if fixed is None or fixed[0] == text:
                raise SpecImportError(
                    path,
                    first.line,
                    "",
                    f"IREE 3.13 cannot parse this spec: {first.message}"
                    + "".join(f"; {n}" for n in first.notes)
                    + _unknown_pipeline(text, first),
                    "tdsl upgrades old pipeline names, prefetch_shared_memory, properties written as attributes, "
                    "transform.print {name = ..} and operand-first MMA names; this is none of them",
                ) from None
            text = fixed[0]
            notes.append(Note(first.line, fixed[1]))
    raise SpecImportError(path, None, "", f"more than {MAX_UPGRADES} upgrades needed")
