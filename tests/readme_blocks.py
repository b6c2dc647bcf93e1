"""The documentation's runnable blocks by page and section: the Python snippets and the
`tdsl` / `iree-compile` command lines of README.md, docs/*.md and the example and benchmark READMEs, and a
runner that plays one section in a scratch directory holding a copy of the examples
(sections are independent of each other)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def pages() -> list[str]:
    """Every documentation page, relative to the repository root."""
    found = ["README.md", *(p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "docs").glob("*.md")))]
    found += [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "examples").glob("*/README.md"))]
    found += [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "benchmarks").glob("*/README.md"))]
    return found


SLOW_MODELS = (("docs/real-models.md", "## Start from the op listing"),)
"""The (page, section) pairs test_readme_models.py plays."""

SLOW_TUNING = (("docs/tuning.md", "## Run it"),)
"""The (page, section) pairs test_readme_tuning.py plays (a file of its own, so that it runs
beside test_readme_models.py)."""

SLOW = SLOW_MODELS + SLOW_TUNING
"""The slow sections, played by the two files above; test_readme.py plays the others."""

EXIT = re.compile(r"#\s*exit (\d+)")
"""A command line whose comment starts with ``exit N`` is expected to exit with N."""


def _runnable(kind: str, body: str) -> bool:
    return kind == "python" or any(line.strip().startswith(("tdsl ", "iree-compile ")) for line in body.splitlines())


def code_blocks(text: str) -> list[tuple[int, str, str]]:
    """``[(offset, kind, body)]`` for every fenced block (any language) of ``text``."""
    return [(m.start(), m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M)]


def sections(page: str = "README.md") -> dict[str, list[tuple[str, str]]]:
    """``{"## heading": [(kind, body), ...]}`` for every section of ``page`` with a Python
    snippet or a ``tdsl`` / ``iree-compile`` command line."""
    text = (ROOT / page).read_text()
    heads = [(m.start(), m.group(0)) for m in re.finditer(r"^## .*$", text, flags=re.M)]
    out: dict[str, list[tuple[str, str]]] = {}
    for start, kind, body in code_blocks(text):
        if kind not in ("python", "sh"):
            continue
        head = [h for pos, h in heads if pos < start]
        if _runnable(kind, body):
            out.setdefault(head[-1] if head else "", []).append((kind, body))
    return out


def all_sections() -> list[tuple[str, str]]:
    """Every runnable ``(page, heading)`` of the documentation."""
    return [(page, heading) for page in pages() for heading in sections(page)]


def command_lines(body: str, program: str = "tdsl") -> list[str]:
    """The ``program ...`` lines of a shell block, comments cut."""
    return [
        line.split("#")[0].strip() for line in body.splitlines() if line.split("#")[0].strip().startswith(program + " ")
    ]


def play(blocks: list[tuple[str, str]], tmp_path: Path, page: str = "README.md") -> int:
    """Runs ``blocks`` in order in ``tmp_path`` (the caller has chdir'd there); returns how
    many snippets and commands ran. A command that exits otherwise than expected (0, or the
    ``# exit N`` of its comment) raises AssertionError."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    bin_dir = Path(sys.executable).parent
    ran = 0
    for kind, body in blocks:
        if kind == "python":
            first = body.splitlines()[0]
            if first.startswith("# ") and first.endswith(".py"):
                (tmp_path / first[2:]).write_text(body)
            exec(compile(body, page, "exec"), {"__name__": "readme"})
            ran += 1
            continue
        for line in body.splitlines():
            command, _, comment = line.partition("#")
            command = command.strip()
            expected = EXIT.match("#" + comment)
            if command.startswith("tdsl "):
                args = [str(bin_dir / "tdsl"), *shlex.split(command)[1:]]
            elif command.startswith("iree-compile "):
                flags = (tmp_path / "out" / "flags.txt").read_text().split()
                rest = command.split()[1:]
                rest.remove("$(cat")
                rest.remove("out/flags.txt)")
                args = [str(bin_dir / "iree-compile"), *flags, *rest]
            else:
                continue
            proc = subprocess.run(args, capture_output=True, text=True)
            want = int(expected.group(1)) if expected else 0
            assert proc.returncode == want, (
                f"{page}: `{command}` exited {proc.returncode}, expected {want}\n{proc.stderr[-3000:]}"
            )
            ran += 1
    return ran
