"""The README's runnable blocks by section: its Python snippets and its `tdsl` /
`iree-compile` command lines, and a runner that plays one section in a scratch directory
holding a copy of the examples (sections are independent of each other)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


SLOW = ("## Real models", "## Tuning")
"""The sections test_readme_models.py plays; test_readme.py plays the others."""


def _runnable(kind: str, body: str) -> bool:
    return kind == "python" or any(line.strip().startswith(("tdsl ", "iree-compile ")) for line in body.splitlines())


def sections() -> dict[str, list[tuple[str, str]]]:
    """``{"## heading": [(kind, body), ...]}`` for every section with a Python snippet or a
    ``tdsl`` / ``iree-compile`` command line."""
    heads = [(m.start(), m.group(0)) for m in re.finditer(r"^## .*$", README, flags=re.M)]
    out: dict[str, list[tuple[str, str]]] = {}
    for m in re.finditer(r"```(python|sh)\n(.*?)```", README, flags=re.S):
        head = [h for start, h in heads if start < m.start()]
        if _runnable(m.group(1), m.group(2)):
            out.setdefault(head[-1] if head else "", []).append((m.group(1), m.group(2)))
    return out


def play(blocks: list[tuple[str, str]], tmp_path: Path) -> int:
    """Runs ``blocks`` in order in ``tmp_path`` (the caller has chdir'd there); returns how
    many snippets and commands ran. A failing command raises CalledProcessError."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    bin_dir = Path(sys.executable).parent
    ran = 0
    for kind, body in blocks:
        if kind == "python":
            first = body.splitlines()[0]
            if first.startswith("# ") and first.endswith(".py"):
                (tmp_path / first[2:]).write_text(body)
            exec(compile(body, "README.md", "exec"), {"__name__": "readme"})
            ran += 1
            continue
        for line in body.splitlines():
            command = line.split("#")[0].strip()
            if command.startswith("tdsl "):
                subprocess.run([str(bin_dir / "tdsl"), *command.split()[1:]], check=True, capture_output=True)
                ran += 1
            elif command.startswith("iree-compile "):
                flags = (tmp_path / "out" / "flags.txt").read_text().split()
                args = command.split()[1:]
                args.remove("$(cat")
                args.remove("out/flags.txt)")
                subprocess.run([str(bin_dir / "iree-compile"), *flags, *args], check=True, capture_output=True)
                ran += 1
    return ran
