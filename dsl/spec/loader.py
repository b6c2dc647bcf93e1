"""Loading and dumping strategy sets: Python files, YAML and JSON.

A Python strategy file defines one or more module-level :class:`StrategySet` objects;
``FILE.py:NAME`` picks one by name. YAML/JSON files hold one StrategySet in the form
:func:`dump` writes, which round-trips without loss.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import traceback
from pathlib import Path
from typing import Any

import yaml

from ..errors import StrategyFileError, TdslError
from .strategy_set import StrategySet

PY_SUFFIXES = (".py",)
DATA_SUFFIXES = (".yaml", ".yml", ".json")


def split_spec(spec: str) -> tuple[Path, str | None]:
    """``"dir/file.py:name"`` -> (Path("dir/file.py"), "name")."""
    path, _, name = spec.partition(":") if spec.count(":") == 1 and not Path(spec).exists() else (spec, "", "")
    return Path(path), (name or None)


def as_strategy_set(strategies: StrategySet | str | Path) -> StrategySet:
    """``strategies`` itself, or the set :func:`load` reads from that strategy file."""
    return strategies if isinstance(strategies, StrategySet) else load(strategies)


def load(spec: str | Path) -> StrategySet:
    """Loads the StrategySet named by ``spec`` (``FILE``, or ``FILE.py:NAME``)."""
    path, name = split_spec(str(spec))
    if not path.is_file():
        raise StrategyFileError(f"strategy file {str(path)!r} does not exist")
    suffix = path.suffix.lower()
    if suffix in PY_SUFFIXES:
        return _load_python(path, name)
    if suffix in DATA_SUFFIXES:
        if name is not None:
            raise StrategyFileError(f"{path}: ':NAME' selects objects in Python files only")
        return _load_data(path)
    raise StrategyFileError(
        f"{path}: expected a .py, .yaml, .yml or .json strategy file, received {suffix or 'no suffix'!r}"
    )


def _load_python(path: Path, name: str | None) -> StrategySet:
    module_name = f"_tdsl_strategy_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise StrategyFileError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except TdslError:
        raise
    except Exception as err:  # the user's file failed; report where, not our stack
        frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == str(path)]
        where = f"{path}:{frames[-1].lineno}" if frames else str(path)
        raise StrategyFileError(f"{where}: {type(err).__name__}: {err}") from None
    finally:
        sys.modules.pop(module_name, None)
    sets = {k: v for k, v in vars(module).items() if isinstance(v, StrategySet)}
    if name is not None:
        found = getattr(module, name, None)
        if not isinstance(found, StrategySet):
            raise StrategyFileError(
                f"{path}: expected a StrategySet named {name!r}, received "
                + (type(found).__name__ if found is not None else "nothing")
                + f"; StrategySets in the file: {sorted(sets)}"
            )
        return found
    if len(sets) != 1:
        raise StrategyFileError(
            f"{path}: expected exactly one module-level StrategySet (or FILE.py:NAME), "
            f"received {len(sets)}: {sorted(sets)}"
        )
    return next(iter(sets.values()))


def _load_data(path: Path) -> StrategySet:
    text = path.read_text()
    try:
        data: Any = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as err:
        raise StrategyFileError(f"{path}: not valid {path.suffix[1:].upper()}: {err}") from None
    if not isinstance(data, dict):
        raise StrategyFileError(
            f"{path}: expected a mapping with name, targets and rules, received {type(data).__name__}"
        )
    loaded: StrategySet = StrategySet.model_validate(data)
    return loaded


def to_data(strategy_set: StrategySet) -> dict[str, Any]:
    """The canonical plain-data form of a set (what YAML/JSON hold)."""
    return strategy_set.model_dump(mode="json")


def dump(strategy_set: StrategySet, fmt: str = "yaml") -> str:
    """``strategy_set`` as YAML or JSON text; :func:`load` of it gives an equal set."""
    data = to_data(strategy_set)
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    if fmt == "yaml":
        return str(yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=100))
    raise StrategyFileError(f"format: expected 'yaml' or 'json', received {fmt!r}")
