"""The processes an ``nvidia-smi`` table in the log lists, per GPU.

Users paste ``nvidia-smi`` next to an OOM to show what else held the GPU. Its
process rows say it directly (GPU, PID, type, name, memory in MiB); the OOM
message's own ``Process N has X memory in use`` list is read by the signatures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.logs.lines import strip_controls

MIB = 1024**2
MAX_SCAN_BYTES = 4 * 1024 * 1024  # a paste; big training logs rarely carry the table

# |    0   N/A  N/A   3401234      C   python3                       71230MiB |   (driver >= 450)
# |    0     12345      C   python                                    71230MiB |   (older)
_ROW = re.compile(
    r"^\|\s+(?P<gpu>\d+)\s+(?:\S+\s+\S+\s+)?(?P<pid>\d+)\s+(?P<type>[CGM+]+)\s+"
    r"(?P<name>\S.*?)\s+(?P<mib>\d+)\s*MiB\s*\|\s*$"
)


@dataclass(frozen=True)
class GpuProcess:
    gpu: int | str  # an index (the table), or a bus id / UUID (the query CSV)
    pid: int
    name: str
    bytes: int


def _lines_with(path: str, marker: bytes) -> list[str]:
    """The lines of the file's head (a paste), or none when ``marker`` is not in it."""
    with open(path, "rb") as handle:
        data = handle.read(MAX_SCAN_BYTES)
    if marker not in data:
        return []
    return data.decode("utf-8", errors="replace").splitlines()


def gpu_processes(path: str) -> list[GpuProcess]:
    """Every process row of the nvidia-smi tables in the file (a small one)."""
    rows: dict[tuple[int | str, int], GpuProcess] = {}
    for raw in _lines_with(path, b"MiB"):
        if "MiB" not in raw:
            continue
        found = _ROW.match(strip_controls(raw).strip())
        if found is None:
            continue
        proc = GpuProcess(
            int(found["gpu"]), int(found["pid"]), found["name"], int(found["mib"]) * MIB
        )
        rows[(proc.gpu, proc.pid)] = proc  # a table printed twice counts once
    return list(rows.values())


# nvidia-smi --query-compute-apps=...,pid,process_name,used_memory --format=csv: a header
# naming the fields, then one row per process; the GPU is a bus id or a UUID, not an index
_CSV_MEMORY = re.compile(r"^(?P<mib>\d+)\s*(?:MiB)?$")


def csv_processes(path: str) -> list[GpuProcess]:
    """Every process row of the ``--query-compute-apps`` CSV blocks in the file; the GPU
    is the bus id or UUID the query printed ("" when it asked for neither)."""
    rows: dict[tuple[int | str, int], GpuProcess] = {}
    fields: list[str] | None = None
    for raw in _lines_with(path, b"used_memory"):
        cells = [cell.strip() for cell in strip_controls(raw).split(",")]
        if "pid" in cells and any(c.startswith("used_memory") for c in cells):
            fields = [c.split(" ")[0] for c in cells]
            continue
        if fields is None:
            continue
        if len(cells) != len(fields):
            fields = None  # the block ended (an empty line, the next command)
            continue
        row = dict(zip(fields, cells, strict=True))
        memory = _CSV_MEMORY.match(row.get("used_memory", ""))
        if memory is None or not row.get("pid", "").isdigit():
            continue
        gpu = row.get("gpu_bus_id") or row.get("gpu_uuid") or ""
        proc = GpuProcess(
            gpu, int(row["pid"]), row.get("process_name", ""), int(memory["mib"]) * MIB
        )
        rows[(proc.gpu, proc.pid)] = proc
    return list(rows.values())


def strangers_beside_the_job(processes: list[GpuProcess]) -> tuple[int, int] | None:
    """(bytes, count) of the largest memory another program holds on a GPU it shares
    with this job's processes: the job is the program most rows name (its ranks); a
    process of another name on one of its GPUs is a stranger (someone else's server, a
    stale run). None when no GPU is shared that way."""
    from collections import Counter

    if not processes or not all(p.gpu for p in processes):
        return None
    job = Counter(p.name for p in processes).most_common(1)[0][0]
    job_gpus = {p.gpu for p in processes if p.name == job}
    strangers = [p for p in processes if p.name != job and p.gpu in job_gpus]
    if not strangers:
        return None
    per_gpu: dict[int | str, list[GpuProcess]] = {}
    for proc in strangers:
        per_gpu.setdefault(proc.gpu, []).append(proc)
    held = max(per_gpu.values(), key=lambda procs: sum(p.bytes for p in procs))
    return sum(p.bytes for p in held), len(held)


def others_on_gpu(
    processes: list[GpuProcess], gpu: int | None, own_bytes: int | None, tolerance: float
) -> tuple[int, int] | None:
    """(bytes, count) held on the failing GPU by processes other than the failing one.

    The failing process is the row closest to what the OOM message says it holds; with
    no such figure, a GPU that shows one process only is the failing process's own."""
    failing: int | str
    if gpu is None:
        gpus = {p.gpu for p in processes}
        if len(gpus) != 1:
            return None
        failing = gpus.pop()
    else:
        failing = gpu
    on_gpu = [p for p in processes if p.gpu == failing]
    if not on_gpu or not own_bytes:
        return None  # which row is the failing process is unknown
    own = min(on_gpu, key=lambda p: abs(p.bytes - own_bytes))
    if abs(own.bytes - own_bytes) <= tolerance * own_bytes:
        on_gpu = [p for p in on_gpu if p is not own]
    # else the failing process is not listed (a container's PID namespace hides it)
    return (sum(p.bytes for p in on_gpu), len(on_gpu)) if on_gpu else None


RANKS_ON_ONE_GPU = 3  # processes of one program on one GPU: ranks that never set their device


def ranks_piled_on_one_gpu(processes: list[GpuProcess]) -> bool:
    """Several processes of the same program on one GPU: the ranks of a job that never
    set their device (torch.cuda.set_device / LOCAL_RANK) and opened their CUDA context
    and NCCL communicator on GPU 0 next to rank 0."""
    from collections import Counter

    counts = Counter((p.gpu, p.name) for p in processes)
    return any(count >= RANKS_ON_ONE_GPU for count in counts.values())
