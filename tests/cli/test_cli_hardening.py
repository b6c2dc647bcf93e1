"""Every command-line failure is one line on stderr and an exit code (0 ok, 1 a verdict,
2 bad input, 3 an internal error, 130 Ctrl-C), and no failure leaves a partial or mixed
output: strategy files, argument values, output paths, compiler crashes and memory-cap
kills, payloads and ``--inputs`` that do not match."""

from __future__ import annotations

import os
import signal
import stat
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tdsl.cli as cli
import tdsl.cli.builds as cli_builds
import tdsl.cli.scripts as cli_scripts
import tdsl.compiler.compile as compile_module
import tdsl.files as files
import tdsl.measure.run as run_module
from tdsl.cli import main
from tdsl.compiler.iree_compile import (
    CompileFailed,
    CompileResult,
    describe_failure,
    failure_kind,
    parse_diagnostics,
    run_iree_compile,
)
from tdsl.compiler.options import MIN_MEMORY_GB, CompileOptions
from tdsl.errors import RenderError, StrategyNotApplied
from tdsl.files import replace_files
from tdsl.render.scripts import RENDER_FILES

ROOT = Path(__file__).resolve().parent.parent.parent
PACK = ROOT / "examples" / "matmul_pack"
MLP = ROOT / "examples" / "mlp"
CPU = [
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=host",
]
ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture(autouse=True)
def failure_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Failures keep their evidence here, not in the system's temporary directory."""
    where = tmp_path_factory.mktemp("failures")
    monkeypatch.setenv("TDSL_FAILURE_DIR", str(where))
    return where


def one_line(capsys: pytest.CaptureFixture[str], prefix: str = "tdsl: error: ") -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith(prefix), err
    return err[len(prefix) : -1]


def tree(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` (hidden ones included) with its bytes."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def never_compile(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("compiled although the input was refused")


# --------------------------------------------------------------------------------------
# Strategy files.


def test_non_utf8_yaml_is_one_line(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"name: x\nrules: \xff\xfe\n")
    assert main(["show", str(bad)]) == 2
    assert one_line(capsys) == f"{bad}:2:8: expected UTF-8 text, received the byte 0xff"


def test_non_utf8_python_file_is_one_line(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.py"
    bad.write_bytes(b"x = '\xff'\n")
    assert main(["show", str(bad)]) == 2
    assert "SyntaxError" in one_line(capsys)


@pytest.mark.parametrize("suffix", ["json", "yaml"])
def test_deeply_nested_file_is_one_line(tmp_path: Path, capsys, suffix: str) -> None:
    deep = tmp_path / f"deep.{suffix}"
    deep.write_text("[" * 5000 + "]" * 5000 + "\n")
    assert main(["render", str(deep), "--target", "cpu", "-o", str(tmp_path / "out")]) == 2
    assert one_line(capsys).endswith(f"received {suffix.upper()} nested too deeply to read")
    assert not (tmp_path / "out").exists()


def test_directory_as_strategy_file_says_so(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "set.yaml"
    folder.mkdir()
    assert main(["show", str(folder)]) == 2
    assert one_line(capsys) == f"strategy file {str(folder)!r}: expected a file, received a directory"


def test_unreadable_file_is_one_line(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = tmp_path / "locked.yaml"
    locked.write_text("name: x\n")

    def denied(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)  # root reads through chmod 000
    assert main(["show", str(locked)]) == 2
    assert one_line(capsys) == f"{locked}: cannot be read: permission denied"


@pytest.mark.skipif(ROOT_USER, reason="root reads a chmod 000 file")
def test_chmod_000_file_is_one_line(tmp_path: Path, capsys) -> None:
    locked = tmp_path / "locked.py"
    locked.write_text("x = 1\n")
    locked.chmod(0)
    assert main(["show", str(locked)]) == 2
    assert one_line(capsys) == f"{locked}: cannot be read: permission denied"


def test_yaml_duplicate_key_names_key_and_line(tmp_path: Path, capsys) -> None:
    dup = tmp_path / "dup.yaml"
    dup.write_text("name: a\ntargets: []\nrules:\n  - target: cpu\n    target: gpu\n")
    assert main(["show", str(dup)]) == 2
    assert one_line(capsys) == (
        f"{dup}: line 5: duplicate key 'target' (first on line 4): a YAML mapping may hold each key once"
    )


def test_yaml_merge_keys_are_not_duplicates(tmp_path: Path) -> None:
    import yaml
    from tdsl.sets.loader import _StrictLoader

    text = "base: &b {name: q, kind: x}\nuse:\n  <<: *b\n  name: r\n"
    assert yaml.load(text, Loader=_StrictLoader)["use"] == {"name": "r", "kind": "x"}


def test_json_duplicate_key_names_key_and_line(tmp_path: Path, capsys) -> None:
    dup = tmp_path / "dup.json"
    dup.write_text('{\n  "name": "a",\n  "rules": [],\n  "name": "b"\n}\n')
    assert main(["show", str(dup)]) == 2
    assert one_line(capsys) == (
        f"{dup}: line 4: duplicate key 'name' (first on line 2): a JSON mapping may hold each key once"
    )


def test_yaml_key_that_is_not_a_string_is_one_line(tmp_path: Path, capsys) -> None:
    odd = tmp_path / "odd.yaml"
    odd.write_text("name: x\nrules:\n  - 1: 2\n")
    assert main(["show", str(odd)]) == 2
    assert one_line(capsys) == f"{odd}: not valid YAML for a strategy set: line 3: expected a string key, received 1"


def test_invalid_yaml_syntax_is_one_line(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [x\n")
    assert main(["show", str(bad)]) == 2
    assert one_line(capsys).startswith(f"{bad}: not valid YAML: line ")


def test_python_file_that_exits_is_one_line(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bye.py"
    bad.write_text("import sys\nsys.exit(3)\n")
    assert main(["show", str(bad)]) == 2
    assert one_line(capsys).endswith("received a call of exit(3)")


# --------------------------------------------------------------------------------------
# Argument values: refused by argparse, one line, exit 2, before any work.


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--threads", "abc"], "argument --threads: expected 1, all, or a comma-separated list of thread counts"),
        (["--threads", "1,0"], "argument --threads: expected 1, all, or a comma-separated list of thread counts"),
        (["--threads", "1,,2"], "argument --threads: expected 1, all, or a comma-separated list of thread counts"),
        (["--peers", "tvm"], "argument --peers: expected installed, none or a comma-separated list of onnxruntime"),
        (["--compare", "tuned"], "argument --compare: expected NAME=FILE[:SET] (a name without spaces)"),
        (["--compare", "a b=x.py"], "argument --compare: expected NAME=FILE[:SET] (a name without spaces)"),
        (["--timeout", "-1"], "argument --timeout: expected a number above 0, received '-1'"),
        (["--timeout", "0"], "argument --timeout: expected a number above 0, received '0'"),
        (["--timeout", "inf"], "argument --timeout: expected a number above 0, received 'inf'"),
        (["--memory-gb", "0.01"], f"argument --memory-gb: expected at least {MIN_MEMORY_GB:g} GiB"),
        (["--memory-gb", "lots"], "argument --memory-gb: expected a number of GiB"),
        (["--repetitions", "0"], "argument --repetitions: expected an integer of at least 1, received '0'"),
        (["--min-time", "0"], "argument --min-time: expected a number above 0, received '0'"),
    ],
)
def test_bad_bench_arguments_are_one_line(
    capsys, monkeypatch: pytest.MonkeyPatch, extra: list[str], message: str
) -> None:
    monkeypatch.setattr(cli_builds, "_cmd_bench", never_compile)
    argv = ["bench", str(PACK / "payload.mlir"), "--strategies", str(PACK / "strategy.py"), *extra]
    assert main(argv) == 2
    line = one_line(capsys)
    assert line.startswith(message) and line.endswith("(see 'tdsl bench --help')")


@pytest.mark.parametrize(
    ("command", "extra"),
    [("compile", ["--target", "cpu", "--timeout", "-1"]), ("run", ["--memory-gb", "0.01"]), ("run", ["--seed", "-1"])],
)
def test_bad_limits_of_compile_and_run_are_one_line(capsys, command: str, extra: list[str]) -> None:
    assert main([command, str(PACK / "payload.mlir"), "--strategies", str(PACK / "strategy.py"), *extra]) == 2
    one_line(capsys)


def test_threads_are_parsed_once() -> None:
    args = cli.parser().parse_args(["bench", "p.mlir", "--strategies", "s.py", "--threads", "1, 2"])
    assert args.threads == (1, 2)


def test_all_threads_are_the_cpus_this_process_may_use(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    parse = cli.parser().parse_args
    assert parse(["bench", "p.mlir", "--strategies", "s.py", "--threads", "1,all"]).threads == (1, 4)
    assert parse(["bench", "p.mlir", "--strategies", "s.py", "--threads", "ALL,4"]).threads == (4,)


@pytest.mark.compile
@pytest.mark.skipif((os.cpu_count() or 1) > 8, reason="each core adds ~72 MiB of address space (arena + stack)")
def test_memory_floor_lets_iree_compile_start(tmp_path: Path) -> None:
    """The smallest cap the command line accepts compiles a small payload (measured: about
    0.4 GiB suffice on 2 cores; see MIN_MEMORY_GB)."""
    result = run_iree_compile(PACK / "payload.mlir", CPU, tmp_path / "m.vmfb", CompileOptions(memory_gb=MIN_MEMORY_GB))
    assert result.ok and (tmp_path / "m.vmfb").is_file()


def test_help_documents_exit_codes(capsys) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for code in ("0 ", "1 ", "2 ", "3 ", "130"):
        assert f"\n  {code}" in out


# --------------------------------------------------------------------------------------
# render -o: one set at a time, written atomically.


def test_render_under_a_regular_file_is_one_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "file.txt").write_text("x")
    out = tmp_path / "file.txt" / "out"
    assert main(["render", str(PACK / "strategy.py"), "--target", "cpu", "-o", str(out)]) == 2
    assert one_line(capsys) == f"-o {str(out)!r}: {str(tmp_path / 'file.txt')!r} is a file, not a directory"
    assert tree(tmp_path) == {"file.txt": b"x"}


def test_render_onto_a_regular_file_is_one_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "file.txt").write_text("x")
    assert main(["render", str(PACK / "strategy.py"), "--target", "cpu", "-o", str(tmp_path / "file.txt")]) == 2
    assert "expected a directory, received an existing file" in one_line(capsys)
    assert tree(tmp_path) == {"file.txt": b"x"}


def test_render_into_a_read_only_directory_is_one_line(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "ro"
    out.mkdir()
    out.chmod(stat.S_IRUSR | stat.S_IXUSR)
    if ROOT_USER:  # root writes through the mode: simulate what a user sees
        monkeypatch.setattr(cli.os, "access", lambda path, mode: Path(path) != out)
    try:
        assert main(["render", str(PACK / "strategy.py"), "--target", "cpu", "-o", str(out)]) == 2
        assert one_line(capsys) == f"-o {str(out)!r}: the directory {str(out)!r} is not writable"
        assert list(out.iterdir()) == []
    finally:
        out.chmod(stat.S_IRWXU)


def test_render_write_failure_is_one_line_and_changes_nothing(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    assert main(["render", str(MLP / "strategy.py"), "--target", "cpu", "-o", str(out)]) == 0
    capsys.readouterr()
    before = tree(out)

    def full(*args: Any, **kwargs: Any) -> Any:
        raise OSError(28, "No space left on device", str(out))

    monkeypatch.setattr(files, "_write_synced", full)
    assert main(["render", str(PACK / "strategy.py"), "--target", "cpu", "-o", str(out)]) == 2
    assert one_line(capsys) == f"-o {str(out)!r}: cannot write the scripts: no space left on device ({out})"
    assert tree(out) == before


def test_render_replaces_the_whole_set_and_keeps_user_files(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["render", str(MLP / "strategy.py"), "--target", "cpu", "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["flags.txt", "preprocessing.mlir", "tuning_spec.mlir"]
    (out / "notes.txt").write_text("mine")
    (out / "payload.mlir").write_text("// mine")
    assert main(["render", str(PACK / "strategy.py"), "--target", "cpu", "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["flags.txt", "notes.txt", "payload.mlir", "preprocessing.mlir"]
    assert (out / "notes.txt").read_text() == "mine" and (out / "payload.mlir").read_text() == "// mine"
    flags = (out / "flags.txt").read_text()
    assert "tuning-spec" not in flags and str((out / "preprocessing.mlir").resolve()) in flags
    printed = capsys.readouterr().out.split()
    assert printed[-2:] == [str(out / "preprocessing.mlir"), str(out / "flags.txt")]


def test_interrupted_render_leaves_the_earlier_set(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    assert main(["render", str(MLP / "strategy.py"), "--target", "cpu", "-o", str(out)]) == 0
    capsys.readouterr()
    before = tree(out)
    written: list[Path] = []
    real = files._write_synced

    def ctrl_c_after_one(path: Path, data: Any, mode: int) -> None:
        if written:
            raise KeyboardInterrupt
        written.append(path)
        real(path, data, mode)

    monkeypatch.setattr(files, "_write_synced", ctrl_c_after_one)
    assert main(["render", str(PACK / "strategy.py"), "--target", "cpu", "-o", str(out)]) == 130
    assert capsys.readouterr().err == "tdsl: interrupted\n"
    assert tree(out) == before  # no staging directory left, the earlier set intact


def test_render_into_a_new_directory_leaves_no_staging(tmp_path: Path) -> None:
    assert main(["render", str(PACK / "strategy.py"), "--target", "cpu", "-o", str(tmp_path / "a" / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["out"]
    assert sorted(p.name for p in (tmp_path / "a" / "out").iterdir()) == ["flags.txt", "preprocessing.mlir"]
    assert oct((tmp_path / "a" / "out").stat().st_mode & 0o777) == oct(0o777 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_replace_files_rolls_back_a_failed_swap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    replace_files(tmp_path, {"a.mlir": "old a", "flags.txt": "old flags"}, owned=("a.mlir", "b.mlir", "flags.txt"))
    before = tree(tmp_path)
    real = os.rename
    calls: list[str] = []

    def fail_on_flags(src: Any, dst: Any) -> None:  # once: the rollback's renames work
        calls.append(str(dst))
        if str(dst) == str(tmp_path / "flags.txt") and calls.count(str(dst)) == 1:
            raise OSError(5, "Input/output error")
        real(src, dst)

    monkeypatch.setattr(files.os, "rename", fail_on_flags)
    with pytest.raises(OSError, match="Input/output error"):
        replace_files(tmp_path, {"b.mlir": "new b", "flags.txt": "new flags"}, owned=("a.mlir", "b.mlir", "flags.txt"))
    monkeypatch.undo()
    assert tree(tmp_path) == before
    assert str(tmp_path / "b.mlir") in calls  # it failed half-way through the swap


def test_replace_files_defers_ctrl_c_during_the_swap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.rename

    def interrupt_then_rename(src: Any, dst: Any) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # arrives once the swap is done
        real(src, dst)

    monkeypatch.setattr(files.os, "rename", interrupt_then_rename)
    (tmp_path / "out").mkdir()
    with pytest.raises(KeyboardInterrupt):
        replace_files(tmp_path / "out", {"a.mlir": "a", "flags.txt": "f"}, owned=RENDER_FILES)
    monkeypatch.undo()
    assert tree(tmp_path / "out") == {"a.mlir": b"a", "flags.txt": b"f"}


def test_replace_files_refuses_a_directory_in_place_of_a_file(tmp_path: Path) -> None:
    (tmp_path / "flags.txt").mkdir()
    with pytest.raises(IsADirectoryError):
        replace_files(tmp_path, {"flags.txt": "x"})
    assert tree(tmp_path) == {} and [p.name for p in tmp_path.iterdir()] == ["flags.txt"]


# --------------------------------------------------------------------------------------
# compile: output paths, crashes, memory, evidence.


def test_compile_into_an_existing_directory_is_refused_before_compiling(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compile_module, "run_iree_compile", never_compile)
    monkeypatch.setattr(compile_module, "render", never_compile)
    argv = [
        "compile",
        str(PACK / "payload.mlir"),
        "--strategies",
        str(PACK / "strategy.py"),
        "--target",
        "cpu",
        "-o",
        str(tmp_path),
    ]
    assert main(argv) == 2
    assert one_line(capsys) == f"output {str(tmp_path)!r}: expected a file path, received an existing directory"


def test_compile_under_a_regular_file_is_refused_before_compiling(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compile_module, "run_iree_compile", never_compile)
    (tmp_path / "file.txt").write_text("x")
    out = tmp_path / "file.txt" / "m.vmfb"
    argv = [
        "compile",
        str(PACK / "payload.mlir"),
        "--strategies",
        str(PACK / "strategy.py"),
        "--target",
        "cpu",
        "-o",
        str(out),
    ]
    assert main(argv) == 2
    assert one_line(capsys) == f"output {str(out)!r}: {str(tmp_path / 'file.txt')!r} is not a directory"


def _result(returncode: int, stderr: str, timed_out: bool = False) -> CompileResult:
    return CompileResult(
        ("iree-compile", "p.mlir"), returncode, stderr, tuple(parse_diagnostics(stderr)), 1.0, None, timed_out
    )


SEGFAULT = (
    "Please report issues to https://github.com/iree-org/iree/issues and include the crash backtrace.\n"
    "Stack dump:\n0.\tProgram arguments: iree-compile p.mlir\n"
    " #4 0x00007f9537fd1095 mlir::WalkResult llvm::function_ref<mlir::WalkResult (mlir::Operation*)>::callback_fn<"
    "mlir::iree_compiler::(anonymous namespace)::GPUPromoteMatmulOperandsPass::runOnOperation()::'lambda'(mlir::Operation*)>\n"
)


@pytest.mark.parametrize(
    ("returncode", "stderr", "timed_out", "kind"),
    [
        (-signal.SIGSEGV, SEGFAULT, False, "crash"),
        (-signal.SIGABRT, "LLVM ERROR: unexpected op\nStack dump:\n", False, "crash"),
        (1, "PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/\n", False, "crash"),
        (-signal.SIGABRT, "terminate called after throwing an instance of 'std::bad_alloc'\n", False, "memory"),
        (-signal.SIGABRT, "LLVM ERROR: out of memory\nStack dump:\n", False, "memory"),
        (
            -signal.SIGABRT,
            "LLVM ERROR: pthread_create failed: Resource temporarily unavailable\nStack dump:\n",
            False,
            "memory",
        ),
        (
            127,
            "iree-compile: error while loading shared libraries: libIREECompiler.so: failed to map segment from shared object\n",
            False,
            "memory",
        ),
        (-signal.SIGKILL, "", False, "memory"),
        (-signal.SIGKILL, "", True, "timeout"),
        (1, "p.mlir:1:14: error: expected ')'\n", False, "failed"),
        (0, '<unknown>:0: error: loc("mm.tiles"): bad tile\n', False, "errors"),
    ],
)
def test_failure_kinds(returncode: int, stderr: str, timed_out: bool, kind: str) -> None:
    assert failure_kind(_result(returncode, stderr, timed_out)) == kind


def test_crash_is_told_from_a_memory_cap_kill() -> None:
    crash = describe_failure(_result(-signal.SIGSEGV, SEGFAULT), Path("p.mlir"), CompileOptions(memory_gb=16.0))
    assert crash.startswith("iree-compile crashed (SIGSEGV in GPUPromoteMatmulOperandsPass) on p.mlir")
    assert "not the memory cap" in crash and "\n" not in crash
    oom = describe_failure(
        _result(-signal.SIGABRT, "LLVM ERROR: out of memory\n"), Path("p.mlir"), CompileOptions(memory_gb=2.0)
    )
    assert oom.startswith("iree-compile ran out of memory (SIGABRT) on p.mlir: it hit the 2 GiB address-space cap")


def test_first_error_with_a_strategy_field_leads(tmp_path: Path) -> None:
    stderr = (
        "p.mlir:3:1: error: something in the payload\n"
        '<unknown>:0: error: loc("mm.tiles[1]"): tile does not divide\n'
        "p.mlir:4:1: note: here\n"
    )
    line = describe_failure(_result(1, stderr), Path("p.mlir"), CompileOptions(memory_gb=16.0))
    assert line == (
        "iree-compile failed (exit 1) on p.mlir: strategy field mm.tiles[1]: error: tile does not divide "
        "(and 1 more error)"
    )


@pytest.mark.compile
def test_memory_cap_kill_says_memory(tmp_path: Path, failure_dir: Path) -> None:
    with pytest.raises(CompileFailed) as err:
        run_iree_compile(PACK / "payload.mlir", CPU, tmp_path / "m.vmfb", CompileOptions(memory_gb=0.3))
    assert "ran out of memory" in str(err.value) and "0.3 GiB address-space cap" in str(err.value)
    assert "crashed" not in str(err.value) and "\n" not in str(err.value)
    assert list(tmp_path.iterdir()) == []
    assert err.value.evidence is not None and (err.value.evidence / "iree-compile.log").is_file()


def test_crashing_compiler_keeps_scripts_and_dumps(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash (here a stand-in compiler that dies of SIGSEGV after a stack dump) is one line
    that names a directory holding the output, the command and copies of every file the
    compiler read from tdsl's temporary directories."""
    fake = tmp_path / "iree-compile"
    fake.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in --iree-hal-dump-executable-files-to=*) '
        'mkdir -p "${a#*=}" && echo dispatch > "${a#*=}/module_0.mlir";; esac; done\n'
        "echo 'Stack dump:' >&2\n"
        "echo ' #4 0x1 (anonymous namespace)::GPUPromoteMatmulOperandsPass::runOnOperation()' >&2\n"
        "kill -SEGV $$\n"
    )
    fake.chmod(0o755)
    monkeypatch.setattr(compile_module.mlir, "tool_path", lambda name: str(fake))
    out = tmp_path / "m.vmfb"
    argv = [
        "compile",
        str(PACK / "payload.mlir"),
        "--strategies",
        str(MLP / "strategy.py"),
        "--target",
        "cpu",
        "-o",
        str(out),
    ]
    assert main(argv) == 2
    line = one_line(capsys)
    assert line.startswith(f"iree-compile crashed (SIGSEGV in GPUPromoteMatmulOperandsPass) on {PACK / 'payload.mlir'}")
    evidence = Path(line.rsplit("full output in ", 1)[1]).parent
    names = {p.name for p in evidence.iterdir()}
    assert {"iree-compile.log", "command.sh", "preprocessing.mlir", "tuning_spec.mlir", "dump"} <= names
    assert str(evidence / "tuning_spec.mlir") in (evidence / "command.sh").read_text()
    assert not out.exists()


@pytest.mark.compile
def test_unmapped_error_cites_files_that_exist_after_return(tmp_path: Path) -> None:
    """An error in a script from a temporary directory cites the kept copy of the script."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    library = scratch / "lib.mlir"
    library.write_text("module attributes {transform.with_named_sequence} {\n  transform.bogus\n}\n")
    with pytest.raises(CompileFailed) as err:
        run_iree_compile(PACK / "payload.mlir", [*CPU, f"--iree-codegen-transform-dialect-library={library}"], None)
    library.unlink()
    scratch.rmdir()
    message = str(err.value)
    assert "\n" not in message and str(scratch) not in message
    cited = [w.split(":")[0] for w in message.replace(";", " ").split() if w.startswith("/")]
    assert cited and all(Path(c).exists() for c in cited), cited
    assert err.value.evidence is not None and (err.value.evidence / "lib.mlir").is_file()


# --------------------------------------------------------------------------------------
# run: payload and --inputs checked before anything compiles.


@pytest.fixture
def no_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_module, "compile_with_options", never_compile)
    monkeypatch.setattr(run_module, "compile_default", never_compile)


@pytest.mark.parametrize(
    ("signature", "received"),
    [
        ("%a: tensor<?x4xf32>) -> tensor<?x4xf32>", "tensor<?x4xf32> (dynamic shapes are not supported)"),
        ("%a: tensor<*xf32>) -> tensor<*xf32>", "tensor<*xf32>"),
        ("%a: f32) -> f32", "f32"),
    ],
)
def test_run_on_a_payload_it_cannot_feed_is_one_line(
    tmp_path: Path, capsys, no_compile: None, signature: str, received: str
) -> None:
    payload = tmp_path / "p.mlir"
    result_type = signature.rsplit("-> ", 1)[1]
    payload.write_text(f"func.func @f({signature} {{\n  return %a : {result_type}\n}}\n")
    assert main(["run", str(payload), "--strategies", str(PACK / "strategy.py")]) == 2
    assert one_line(capsys) == (
        f"{payload}: expected function arguments and results of static-shape tensor types, received {received}"
    )


def test_run_missing_payload_is_one_line(tmp_path: Path, capsys, no_compile: None) -> None:
    assert main(["run", str(tmp_path / "nope.mlir"), "--strategies", str(PACK / "strategy.py")]) == 2
    assert one_line(capsys) == (
        f"payload {str(tmp_path / 'nope.mlir')!r}: expected a payload file (.mlir or .onnx), received a path that does not exist"
    )


def _run_inputs(*paths: Path) -> list[str]:
    return ["run", str(PACK / "payload.mlir"), "--strategies", str(PACK / "strategy.py"), "--inputs", *map(str, paths)]


def _good_inputs(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    np.save(a, np.zeros((256, 512), np.float32))
    np.save(b, np.zeros((512, 384), np.float32))
    return a, b


def test_run_inputs_missing_file(tmp_path: Path, capsys, no_compile: None) -> None:
    a, _ = _good_inputs(tmp_path)
    assert main(_run_inputs(a, tmp_path / "nope.npy")) == 2
    assert one_line(capsys) == f"--inputs {str(tmp_path / 'nope.npy')!r}: the file does not exist"


@pytest.mark.parametrize("kind", ["text", "npz", "pickle"])
def test_run_inputs_not_npy(tmp_path: Path, capsys, no_compile: None, kind: str) -> None:
    a, _ = _good_inputs(tmp_path)
    bad = tmp_path / "b.npy"
    if kind == "text":
        bad.write_text("1 2 3\n")
    elif kind == "npz":
        with open(bad, "wb") as handle:
            np.savez(handle, x=np.zeros(2))
    else:
        np.save(bad, np.array([{"a": 1}], dtype=object))
    assert main(_run_inputs(a, bad)) == 2
    assert one_line(capsys).startswith(f"--inputs {str(bad)!r}: expected a .npy array file")


def test_run_inputs_count(tmp_path: Path, capsys, no_compile: None) -> None:
    a, _ = _good_inputs(tmp_path)
    assert main(_run_inputs(a)) == 2
    assert one_line(capsys) == "--inputs: @matmul expects 2 arguments (256x512xf32, 512x384xf32), received 1 arrays"


def test_run_inputs_shape_and_dtype(tmp_path: Path, capsys, no_compile: None) -> None:
    a, b = _good_inputs(tmp_path)
    np.save(b, np.zeros((512, 384), np.float64))
    assert main(_run_inputs(a, b)) == 2
    assert (
        one_line(capsys)
        == f"--inputs: {b}: argument 1 of @matmul expects 512x384xf32 (float32), received 512x384xfloat64"
    )
    np.save(b, np.zeros((384, 512), np.float32))
    assert main(_run_inputs(a, b)) == 2
    assert (
        one_line(capsys)
        == f"--inputs: {b}: argument 1 of @matmul expects 512x384xf32 (float32), received 384x512xfloat32"
    )


def test_bench_plot_into_a_directory_is_refused_before_benchmarking(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tdsl.measure.bench as bench_module

    monkeypatch.setattr(bench_module, "bench_with_options", never_compile)
    argv = ["bench", str(PACK / "payload.mlir"), "--strategies", str(PACK / "strategy.py"), "--plot", str(tmp_path)]
    assert main(argv) == 2
    assert one_line(capsys) == f"--plot {str(tmp_path)!r}: expected a file path, received an existing directory"


# --------------------------------------------------------------------------------------
# Exit codes: verdicts 1, bad input 2, internal errors 3, Ctrl-C 130.


def test_strict_rule_failure_is_a_verdict(capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    def strict(*args: Any, **kwargs: Any) -> Any:
        raise StrategyNotApplied("--strict: rule 0 (mm) matched nothing in payload.mlir for target cpu")

    monkeypatch.setattr(compile_module, "compile_with_options", strict)
    argv = [
        "compile",
        str(PACK / "payload.mlir"),
        "--strategies",
        str(PACK / "strategy.py"),
        "--target",
        "cpu",
        "--strict",
    ]
    assert main(argv) == 1
    assert one_line(capsys) == "--strict: rule 0 (mm) matched nothing in payload.mlir for target cpu"


def test_render_error_is_one_line_with_the_report_in_a_file(
    capsys, monkeypatch: pytest.MonkeyPatch, failure_dir: Path
) -> None:
    script = "module {\n  transform.bogus\n}\n"

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RenderError(
            "the rendered script for tuning_spec does not verify (strategy field mm.tiles):\n"
            "  error: custom op 'transform.bogus' is unknown\n 1 | module {\n>2 |   transform.bogus\n",
            script,
            "mm.tiles",
            2,
        )

    monkeypatch.setattr(cli_scripts, "render", broken)
    assert main(["flags", str(PACK / "strategy.py"), "--target", "cpu"]) == 2
    line = one_line(capsys)
    assert line.startswith(
        "the rendered script for tuning_spec does not verify (strategy field mm.tiles): "
        "error: custom op 'transform.bogus' is unknown; the script and every error are in "
    )
    kept = Path(line.rsplit(" are in ", 1)[1])
    assert kept.parent == failure_dir and (kept / "script.mlir").read_text() == script
    assert ">2 |   transform.bogus" in (kept / "render-error.txt").read_text()


def test_internal_error_is_one_line_exit_3(capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    def bug(*args: Any, **kwargs: Any) -> Any:
        return {}["missing"]

    monkeypatch.setattr(cli_scripts, "as_strategy_set", bug)
    monkeypatch.delenv("TDSL_TRACEBACK", raising=False)
    assert main(["show", str(PACK / "strategy.py")]) == 3
    assert one_line(capsys) == (
        "internal error: KeyError: 'missing' (a bug in tdsl, not in the input; TDSL_TRACEBACK=1 prints the traceback)"
    )


def test_ctrl_c_exits_130(capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_scripts, "as_strategy_set", interrupted)
    assert main(["show", str(PACK / "strategy.py")]) == 130
    assert capsys.readouterr().err == "tdsl: interrupted\n"


def test_os_error_is_bad_input(capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    def gone(*args: Any, **kwargs: Any) -> Any:
        raise FileNotFoundError(2, "No such file or directory", "/gone")

    monkeypatch.setattr(cli_scripts, "as_strategy_set", gone)
    assert main(["show", str(PACK / "strategy.py")]) == 2
    assert one_line(capsys) == "no such file or directory (/gone)"


@pytest.mark.e2e
def test_console_script_exit_code(tmp_path: Path) -> None:
    """The installed entry point passes main's code through (no traceback, one line)."""
    import subprocess

    folder = tmp_path / "s.yaml"
    folder.mkdir()
    proc = subprocess.run([sys.executable, "-m", "tdsl", "show", str(folder)], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "command",
    [
        ["compile", "{p}", "--target", "cpu"],
        ["run", "{p}", "--strategies", "auto()"],
        ["bench", "{p}", "--strategies", "auto()"],
        ["ops", "{p}", "--target", "cpu"],
        ["tune", "{p}", "--target", "cpu", "-o", "{p}.py"],
    ],
    ids=lambda c: c[0],
)
@pytest.mark.parametrize("what", ["directory", "missing"])
def test_a_payload_that_is_no_file_says_what_was_expected_and_received(
    tmp_path: Path, capsys, command: list[str], what: str
) -> None:
    payload = tmp_path / ("models" if what == "directory" else "missing.mlir")
    if what == "directory":
        payload.mkdir()
    assert main([part.replace("{p}", str(payload)) for part in command]) == 2
    received = "a directory" if what == "directory" else "a path that does not exist"
    assert one_line(capsys) == (
        f"payload {str(payload)!r}: expected a payload file (.mlir or .onnx), received {received}"
    )


def test_tune_takes_the_count_it_tunes_for_first_and_the_peers(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    args = cli.parser().parse_args(["tune", "m.onnx", "--target", "cpu", "-o", "out", "--threads", "all,1"])
    assert args.threads == (8, 1) and args.peers is True
    args = cli.parser().parse_args(["tune", "m.onnx", "--target", "cpu", "-o", "out", "--peers", "openvino"])
    assert args.peers == ("openvino",)
