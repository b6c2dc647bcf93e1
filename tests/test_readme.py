"""Every Python snippet and every `tdsl` command of the README runs, in order, in a scratch
directory that holds a copy of the examples."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```(python|sh)\n(.*?)```", README, flags=re.S)


@pytest.mark.compile
def test_readme_snippets_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    bin_dir = Path(sys.executable).parent
    ran = 0
    for kind, body in BLOCKS:
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
    assert ran >= 7
    assert (tmp_path / "mm.vmfb").is_file()
