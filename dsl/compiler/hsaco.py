"""gfx942 resource report: per kernel LDS, registers, spills and MFMA instructions.

Reads the AMDGPU code-object metadata note (``NT_AMDGPU_METADATA``, msgpack) of each
HSACO with pyelftools and msgpack, and counts ``v_mfma`` instructions per kernel in the
ISA text (``.rocmasm``) that IREE dumps next to it. Requires the files that
``--iree-hal-dump-executable-binaries-to`` / ``--iree-hal-dump-executable-files-to``
write (``tdsl.build.compile`` always passes both).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypedDict, cast

import msgpack
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import NoteSection

from ..targets.amdgpu_facts import AmdGpuArch

NT_AMDGPU_METADATA = 32
_LABEL = re.compile(r"^([A-Za-z_][\w.$]*):\s*(?:;.*)?$")


class KernelJson(TypedDict):
    """A kernel's resources as JSON (the fields of :class:`KernelResources`)."""

    name: str
    lds_bytes: int
    vgprs: int
    agprs: int
    sgprs: int
    vgpr_spills: int
    sgpr_spills: int
    scratch_bytes: int
    workgroup_size: int
    mfma_instructions: int | None
    waves_per_simd: int


@dataclass(frozen=True)
class KernelResources:
    """What one compiled kernel uses (from its code-object metadata and ISA)."""

    name: str
    lds_bytes: int
    vgprs: int
    agprs: int
    sgprs: int
    vgpr_spills: int
    sgpr_spills: int
    scratch_bytes: int
    workgroup_size: int
    mfma_instructions: int | None
    waves_per_simd: int
    """Occupancy bound from registers (:meth:`tdsl.targets.AmdGpuArch.waves_per_simd`)."""

    @property
    def spills(self) -> int:
        return self.vgpr_spills + self.sgpr_spills

    def to_json(self) -> KernelJson:
        return cast(KernelJson, asdict(self))

    def line(self) -> str:
        mfma = "?" if self.mfma_instructions is None else str(self.mfma_instructions)
        return (
            f"{self.name}: LDS {self.lds_bytes} B, VGPR {self.vgprs}, AGPR {self.agprs}, "
            f"SGPR {self.sgprs}, spills {self.vgpr_spills}+{self.sgpr_spills}, "
            f"scratch {self.scratch_bytes} B, MFMA {mfma}, waves/SIMD {self.waves_per_simd}"
        )


def kernel_metadata(hsaco: Path | str) -> list[dict[str, Any]]:
    """The ``amdhsa.kernels`` entries of one code object."""
    kernels: list[dict[str, Any]] = []
    with open(hsaco, "rb") as handle:
        elf = ELFFile(handle)
        for section in elf.iter_sections():
            if not isinstance(section, NoteSection):
                continue
            for note in section.iter_notes():
                if note["n_name"] == "AMDGPU" and str(note["n_type"]) in (
                    str(NT_AMDGPU_METADATA),
                    "NT_AMDGPU_METADATA",
                ):
                    desc = note["n_desc"]
                    data = desc if isinstance(desc, bytes) else str(desc).encode("latin-1")
                    kernels.extend(msgpack.unpackb(data, raw=False).get("amdhsa.kernels", []))
    return kernels


def mfma_counts(isa: str) -> dict[str, int]:
    """``v_mfma`` instructions per kernel label in an AMDGPU assembly listing."""
    counts: dict[str, int] = {}
    current: str | None = None
    for line in isa.splitlines():
        label = _LABEL.match(line)
        if label and not label.group(1).startswith("."):
            current = label.group(1)
            counts.setdefault(current, 0)
        elif current is not None and line.lstrip().startswith("v_mfma"):
            counts[current] += 1
    return counts


def resources(dump_dir: Path | str, facts: AmdGpuArch) -> list[KernelResources]:
    """Resources of every kernel in the HSACO files of an IREE executable dump, compiled
    for the GPU that ``facts`` describe."""
    directory = Path(dump_dir)
    mfma: dict[str, int] = {}
    for isa in sorted(directory.glob("*.rocmasm")):
        mfma.update(mfma_counts(isa.read_text()))
    found = []
    for hsaco in sorted(directory.glob("*.hsaco")):
        for k in kernel_metadata(hsaco):
            name = str(k.get(".name", "?"))
            vgprs, agprs = int(k.get(".vgpr_count", 0)), int(k.get(".agpr_count", 0))
            found.append(
                KernelResources(
                    name=name,
                    lds_bytes=int(k.get(".group_segment_fixed_size", 0)),
                    vgprs=vgprs,
                    agprs=agprs,
                    sgprs=int(k.get(".sgpr_count", 0)),
                    vgpr_spills=int(k.get(".vgpr_spill_count", 0)),
                    sgpr_spills=int(k.get(".sgpr_spill_count", 0)),
                    scratch_bytes=int(k.get(".private_segment_fixed_size", 0)),
                    workgroup_size=int(k.get(".max_flat_workgroup_size", 0)),
                    mfma_instructions=mfma.get(name),
                    waves_per_simd=facts.waves_per_simd(vgprs + agprs),
                )
            )
    return sorted(found, key=lambda r: r.name)
