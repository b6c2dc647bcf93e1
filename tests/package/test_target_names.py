"""Targets are told apart only inside ``tdsl.targets``: everywhere else in ``dsl/`` and
``strategies/`` code asks the target (its attributes and methods) or a registry keyed by
its kind, never ``isinstance`` on a target class and never a target's name or kind spelled
as a string.

Two exceptions, by syntax: the ``Backend`` enum of :mod:`tdsl.model.kinds` spells the
backends (a target kind's discriminator equals its backend's name), and a mapping key (a
dict literal's, a subscript, ``.get``) is a machine fact (``machine["cpu"]``: the CPU
model), not a target name.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tdsl.targets import TARGET_KINDS, TargetKind

ROOT = Path(__file__).resolve().parent.parent.parent
CHECKED = (ROOT / "dsl",)
OWNER = ROOT / "dsl" / "targets"

CLASSES = {kind.__name__ for kind in TARGET_KINDS} | {TargetKind.__name__}
NAMES = {kind.default_name for kind in TARGET_KINDS} | {kind.kind_name() for kind in TARGET_KINDS} | {"amdgpu", "hip"}


def _class_names(node: ast.expr) -> list[str]:
    """The class names a second ``isinstance`` argument names (a name, ``a.B`` or a tuple)."""
    if isinstance(node, ast.Tuple):
        return [n for item in node.elts for n in _class_names(item)]
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.BinOp):  # isinstance(x, A | B)
        return _class_names(node.left) + _class_names(node.right)
    return []


def _exempt_constants(tree: ast.AST) -> set[int]:
    """ids of the constants that are mapping keys (dict literals, subscripts, ``.get``) or
    ``Backend`` members."""
    exempt: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            exempt.update(id(k) for k in node.keys if k is not None)
        elif isinstance(node, ast.Subscript):
            exempt.update(id(n) for n in ast.walk(node.slice))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
        ):
            exempt.add(id(node.args[0]))
        elif isinstance(node, ast.ClassDef) and node.name == "Backend":
            exempt.update(id(n) for n in ast.walk(node))
    return exempt


def offences(source: str, where: str) -> list[str]:
    """Every ``isinstance`` / ``issubclass`` / ``type(x) is`` on a target class and every
    target name or kind spelled as a whole string in ``source``."""
    tree = ast.parse(source)
    found: list[str] = []
    exempt = _exempt_constants(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("isinstance", "issubclass")
            and len(node.args) == 2
        ):
            hit = sorted(set(_class_names(node.args[1])) & CLASSES)
            if hit:
                found.append(f"{where}:{node.lineno}: {node.func.id} on {', '.join(hit)}")
        elif (
            isinstance(node, ast.Compare)
            and isinstance(node.left, ast.Call)
            and getattr(node.left.func, "id", None) == "type"
        ):
            hit = sorted({n for c in node.comparators for n in _class_names(c)} & CLASSES)
            if hit:
                found.append(f"{where}:{node.lineno}: type() compared with {', '.join(hit)}")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value in NAMES
            and id(node) not in exempt
        ):
            found.append(f"{where}:{node.lineno}: target name {node.value!r}")
    return sorted(found, key=lambda line: int(line.split(":")[1]))


def test_no_code_outside_targets_tells_targets_apart_by_class_or_name() -> None:
    found: list[str] = []
    for folder in CHECKED:
        for path in sorted(folder.rglob("*.py")):
            if OWNER in path.parents:
                continue
            found += offences(path.read_text(), str(path.relative_to(ROOT)))
    assert not found, "\n".join(found)


def test_the_check_catches_each_form() -> None:
    source = """
from tdsl.targets import AmdGpuTarget, CpuTarget
import tdsl
if isinstance(t, CpuTarget): pass
if isinstance(t, (int, tdsl.AmdGpuTarget)): pass
if type(t) is CpuTarget: pass
if args.target == "gfx942": pass
def f(target: str = "cpu"): pass
kind = "llvm-cpu"
facts = {"cpu": 1}
model = machine["cpu"]
model = machine.get("cpu")
text = "cpu or gfx942 in a sentence"
"""
    found = offences(source, "x.py")
    assert [line.split(": ", 1)[1] for line in found] == [
        "isinstance on CpuTarget",
        "isinstance on AmdGpuTarget",
        "type() compared with CpuTarget",
        "target name 'gfx942'",
        "target name 'cpu'",
        "target name 'llvm-cpu'",
    ], found
