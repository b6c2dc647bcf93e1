"""The package's layering (ARCHITECTURE.md): imports run one way, and the layers are folders.

Layers, bottom to top; a module may import its own layer and the ones below:

0. foundation: ``errors``, ``files``, ``bindings`` (the one shim over ``iree.compiler``)
1. ``model`` (the strategy value types), then ``targets`` (facts and target checks), then
   ``sets`` (a set joins the model and targets; loading; tuning spaces)
2. ``render``
3. ``programs`` (loading .mlir / .onnx, ONNX import and its fixes, signatures, seeded
   inputs, the onnxruntime reference), then ``compiler`` (running ``iree-compile`` under
   limits, flags, diagnostics, ``compile()`` and its report, phases, dispatches), then
   ``measure`` (execution, numerics and ``run()``, timing, ``bench()``)
4. ``importer`` (``tdsl import``: specs read with the bindings into strategy sets)
5. ``tune`` (``tdsl tune``; reads the ready spaces from its registry, :mod:`tdsl.tune.ready`)
6. ``strategies`` (the ready library, ``dsl/strategies/``: it registers its
   tuning spaces with ``tune`` and imports the defining modules, never the package itself)
7. ``testing``, ``cli``, ``schema``, the package itself and ``__main__``
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

DSL = Path(__file__).resolve().parent.parent.parent / "dsl"

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("tdsl.errors", "tdsl.files", "tdsl.bindings")),
    ("strategy model", ("tdsl.model",)),
    ("targets", ("tdsl.targets",)),
    ("strategy sets", ("tdsl.sets",)),
    ("render", ("tdsl.render",)),
    ("programs", ("tdsl.programs",)),
    ("compiler", ("tdsl.compiler",)),
    ("measure", ("tdsl.measure",)),
    ("importer", ("tdsl.importer",)),
    ("tune", ("tdsl.tune",)),
    ("ready library", ("tdsl.strategies",)),
    ("top", ("tdsl.testing", "tdsl.cli", "tdsl.schema", "tdsl.__main__", "tdsl")),
]


def _layer(module: str) -> int:
    """Index of the layer ``module`` belongs to (the longest matching prefix wins)."""
    best, length = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = index, len(prefix)
    assert best >= 0, f"{module} is in no layer"
    return best


def _modules() -> dict[str, Path]:
    """Every module of the package (``dsl/`` is ``tdsl``, the ready library included)."""
    found = {}
    for path in sorted(DSL.rglob("*.py")):
        parts = ["tdsl", *path.relative_to(DSL).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(module: str, path: Path) -> set[str]:
    """The tdsl modules ``module`` imports (anywhere in the file, relative or absolute)."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    known = _modules()
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("tdsl"):
                submodules = {f"{target}.{a.name}" for a in node.names} & set(known)
                names.update(submodules or {target})
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names if a.name.startswith("tdsl"))
    return {n for n in names if n in known and n != module}


def test_every_module_has_a_layer_and_a_folder_per_layer() -> None:
    for module in _modules():
        _layer(module)
    folders = {p.name for p in DSL.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert {"model", "targets", "sets", "render", "programs", "compiler", "measure", "testing"} <= folders


@pytest.mark.parametrize("module", sorted(_modules()))
def test_imports_only_go_down(module: str) -> None:
    path = _modules()[module]
    upward = [
        f"{name} ({LAYERS[_layer(name)][0]})"
        for name in sorted(_imports(module, path))
        if _layer(name) > _layer(module)
    ]
    assert not upward, f"{module} ({LAYERS[_layer(module)][0]}) imports a higher layer: {upward}"


def test_no_import_cycles() -> None:
    modules = _modules()
    graph = {m: _imports(m, p) for m, p in modules.items()}
    graph = {m: {n for n in deps if not m.startswith(n + ".") and n != "tdsl"} for m, deps in graph.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                cycle = stack[stack.index(dep) :] + [dep]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_the_layer_test_catches_an_upward_import(tmp_path: Path) -> None:
    """The check itself: a spec module importing render is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("from ..render import render\nfrom ..compiler.compile import compile\n")
    upward = [n for n in _imports("tdsl.model.bad", bad) if _layer(n) > _layer("tdsl.model.bad")]
    assert sorted(upward) == ["tdsl.compiler.compile", "tdsl.render.render"]


def test_the_ready_library_is_checked_and_imports_no_higher_layer(tmp_path: Path) -> None:
    """``strategies/`` is a layer of its own, above ``tune`` (it registers its spaces there)
    and below the top: a ready module importing ``tdsl`` itself or the CLI is reported, one
    importing the registry is not; ``tune`` importing the ready library is reported."""
    assert "tdsl.strategies.cpu.space" in _modules()
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from tdsl import Rule\nfrom tdsl.cli import main\nfrom tdsl.tune.ready import register_cpu_spaces\n"
    )
    upward = [n for n in _imports("tdsl.strategies.cpu.bad", bad) if _layer(n) > _layer("tdsl.strategies.cpu.bad")]
    assert sorted(upward) == ["tdsl", "tdsl.cli"]
    bad.write_text("from ..strategies.cpu.space import tunable\n")
    upward = [n for n in _imports("tdsl.tune.bad", bad) if _layer(n) > _layer("tdsl.tune.bad")]
    assert upward == ["tdsl.strategies.cpu.space"]


def test_only_the_bindings_shim_imports_iree_compiler() -> None:
    offenders = []
    for module, path in _modules().items():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in getattr(node, "names", [])]
                if isinstance(node, ast.Import)
                else []
            )
            in_bindings = module == "tdsl.bindings" or module.startswith("tdsl.bindings.")
            if any(n.startswith("iree.compiler") for n in names) and not in_bindings:
                offenders.append(module)
    assert not offenders, offenders


def test_every_subpackage_ships_in_the_wheel() -> None:
    """pyproject.toml lists the packages explicitly: a new layer folder must be added there."""
    import tomllib

    listed = set(tomllib.loads((DSL.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {"tdsl." + ".".join(p.parent.relative_to(DSL).parts) for p in DSL.rglob("__init__.py") if p.parent != DSL}
    assert folders <= listed, sorted(folders - listed)
