# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The program the link gate runs as one rank per node, inside the serving image, with the environment vLLM's ranks
get (`python3 -c <this file> <parameters as JSON>`): torch.distributed over the interconnect (NCCL on GPUs, Gloo
without), an all_reduce and an all_gather at growing sizes up to a bounded buffer, timed as nccl-tests times them;
with more than two nodes, the head paired with each other node alone, so that a slow link is named. It prints one
line, the marker then JSON: the figures (every rank holds the same, the slowest rank's time), and what this rank
used (the transport NCCL chose, the NCCL library it loaded).

It imports nothing from this collection and torch only when run, so that importing it (to read its source, to
test its arithmetic) does nothing. _link_gate.py sends its source and reads its answer. Private to the collection."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import socket
import sys
import threading
import time

MIB = 1 << 20


def emit(params, result):
    sys.stdout.write("\n" + params["marker"] + json.dumps(result) + "\n")
    sys.stdout.flush()


def bus_factor(op, world):
    """nccl-tests' bus bandwidth: what each link carries, comparable across cluster sizes (algorithm bandwidth
    times 2(n-1)/n for all_reduce, (n-1)/n for all_gather)."""
    if op == "all_reduce":
        return 2.0 * (world - 1) / world
    return float(world - 1) / world


def sizes_up_to(max_bytes, smallest=MIB, factor=4):
    """The message sizes measured: from `smallest` by `factor` up to max_bytes, which is always the last."""
    sizes, size = [], smallest
    while size < max_bytes:
        sizes.append(size)
        size *= factor
    return sizes + [int(max_bytes)]


def next_fits(seconds_per_iteration, size, next_size, iterations, left):
    """Whether the next size's measurement (warm-up and iterations, at the rate just measured) fits the time left:
    on a throttled link the largest buffer would take minutes, and the figure at the sizes that fit already says
    enough."""
    return seconds_per_iteration * (next_size / float(size)) * (iterations + 1) < left


def transport_from_log(text):
    """What NCCL's INIT,NET log says it used: transport (IB or Socket), the HCA ports or interfaces it names."""
    transport = ""
    if re.search(r"via NET/IB", text) or re.search(r"NET/IB : Using", text):
        transport = "IB"
    elif re.search(r"via NET/Socket", text) or re.search(r"NET/Socket : Using", text):
        transport = "Socket"
    devices = sorted(set(re.findall(r"\[\d+\]([A-Za-z0-9_.:-]+?)(?::\d+)?/(?:RoCE|IB)\b", text)))
    if not devices:
        devices = sorted(set(re.findall(r"NET/Socket : Using (?:\[\d+\])?([A-Za-z0-9_.-]+):", text)))
    return {"transport": transport, "devices": devices}


def nccl_path(maps_lines):
    """The NCCL library itself among a process's mappings (not NCCL's net, tuner or profiler plugins, which it loads
    later and which /proc/self/maps may list first); '' when NCCL is linked into another library."""
    for line in maps_lines:
        path = line.split(None, 5)[-1].strip() if len(line.split(None, 5)) == 6 else ""
        path = path[:-len(" (deleted)")] if path.endswith(" (deleted)") else path
        if re.search(r"/libnccl\.so(\.\d+)*$", path):
            return path
    return ""


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as library:
        for block in iter(lambda: library.read(MIB), b""):
            digest.update(block)
    return digest.hexdigest()


def nccl_library():
    """The NCCL library this process mapped: path, size and sha256 (two builds of one version differ here); with
    NCCL linked statically, the library that carries it (torch's CUDA library), said so."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            lines = maps.readlines()
    except OSError as error:
        return {"error": f"/proc/self/maps: {error}"}
    path, linked = nccl_path(lines), "shared"
    if not path:
        carriers = [line.split(None, 5)[-1].strip() for line in lines if "libtorch_cuda" in line]
        path, linked = (carriers[0] if carriers else ""), "static"
    if not path:
        return {"linked": "unknown"}
    try:
        return {"path": path, "linked": linked, "bytes": os.path.getsize(path), "sha256": sha256_of(path)}
    except OSError as error:
        return {"path": path, "linked": linked, "error": str(error)}


def buffers(torch, op, size, world, device):
    """The tensors one measurement of `op` over `size` bytes uses (nccl-tests' size: the all_gather's whole output,
    one contiguous buffer as nccl-tests gathers into)."""
    count = max(world, size // 4)
    if op == "all_reduce":
        return torch.ones(count, dtype=torch.float32, device=device), None
    return (torch.ones(count // world, dtype=torch.float32, device=device),
            torch.empty(count // world * world, dtype=torch.float32, device=device))


def collective(dist, op, tensors, group, world):
    first, gathered = tensors
    if op == "all_reduce":
        return lambda: dist.all_reduce(first, group=group)
    if hasattr(dist, "all_gather_into_tensor") and first.device.type != "cpu":
        return lambda: dist.all_gather_into_tensor(gathered, first, group=group)
    # Gloo gathers into a list of tensors, views of the one output buffer
    parts = list(gathered.chunk(world))
    return lambda: dist.all_gather(parts, first, group=group)


def measure(dist, torch, op, size, iterations, device, group, world):
    """Seconds per iteration of `op` over `size` bytes, the slowest rank's, every rank holding the same figure."""
    run = collective(dist, op, buffers(torch, op, size, world, device), group, world)

    def sync():
        if device != "cpu":
            torch.cuda.synchronize()

    run()
    sync()
    dist.barrier(group=group)
    start = time.perf_counter()
    for unused in range(iterations):
        run()
    sync()
    elapsed = torch.tensor([(time.perf_counter() - start) / iterations], dtype=torch.float64, device=device)
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX, group=group)
    if device != "cpu":
        torch.cuda.empty_cache()
    return float(elapsed.item())


def row(op, size, seconds, world):
    algbw = size / seconds / 1e9
    return {"op": op, "bytes": size, "time_us": round(seconds * 1e6, 1), "algbw": round(algbw, 3),
            "busbw": round(algbw * bus_factor(op, world), 3), "ranks": world}


def agree(dist, torch, flag, device, group=None):
    """Whether every rank of the group says yes: each rank decides from its own clock or memory, and a decision
    taken apart would leave one rank waiting in a collective the others skipped."""
    vote = torch.tensor([1 if flag else 0], dtype=torch.int32, device=device)
    dist.all_reduce(vote, op=dist.ReduceOp.MIN, group=group)
    return bool(vote.item())


def room_for(torch, params, world, device):
    """'' when this rank can hold the largest buffers the sweep will ask for, else why not (a node whose memory
    vLLM holds). Tried before any timed collective, so that every rank learns it together."""
    try:
        for op in ("all_reduce", "all_gather"):
            held = buffers(torch, op, int(params["max_bytes"]), world, device)
            del held
        if device != "cpu":
            torch.cuda.empty_cache()
        return ""
    except (RuntimeError, MemoryError) as error:
        return f"{type(error).__name__}: {error}"[:300]


def sweep(dist, torch, params, device, group, world, deadline, ops=("all_reduce", "all_gather")):
    rows, skipped = [], []
    sizes = sizes_up_to(int(params["max_bytes"]))
    for op in ops:
        for index, size in enumerate(sizes):
            seconds = measure(dist, torch, op, size, int(params["iterations"]), device, group, world)
            rows.append(row(op, size, seconds, world))
            following = sizes[index + 1] if index + 1 < len(sizes) else None
            if following and not agree(dist, torch, next_fits(seconds, size, following, int(params["iterations"]),
                                                              deadline - time.monotonic()), device, group):
                skipped.append({"op": op, "bytes": following})
                break
    return rows, skipped


def pairs_of(dist, torch, params, device, size):
    """With more than two nodes, the head with each other node alone, one all_gather at the size the whole sweep
    reached (not swept again: the budget is the whole gate's). Every rank creates every group, as torch asks."""
    rank, world, found = int(params["rank"]), int(params["world"]), []
    for other in range(1, world) if world > 2 else ():
        group = dist.new_group([0, other])
        if rank in (0, other):
            seconds = measure(dist, torch, "all_gather", size, int(params["iterations"]), device, group, 2)
            found.append({"ranks": [0, other], "row": row("all_gather", size, seconds, 2)})
        dist.barrier()
    return found


def main(argv):
    params = json.loads(argv[1])
    rank, world = int(params["rank"]), int(params["world"])
    result = {"rank": rank, "host": params.get("host", ""), "hostname": socket.gethostname(), "ok": False}

    def past_deadline():
        # A thread, not a signal: Python runs a signal handler only once the main thread is back from C++, and a
        # rank blocked in a collective or a store wait is not. It answers and ends the process.
        emit(params, dict(result, error=f"deadline: the gate took longer than {params['limit']} s"))
        os._exit(3)

    timer = threading.Timer(int(params["limit"]), past_deadline)
    timer.daemon = True
    timer.start()
    deadline = time.monotonic() + int(params["budget"])
    try:
        import datetime
        import torch
        import torch.distributed as dist
    except ImportError as error:
        emit(params, dict(result, error=f"the serving image has no torch.distributed: {error}"))
        os._exit(0)
    backend = params["backend"]
    device = "cuda:0" if backend == "nccl" else "cpu"
    result.update(backend=backend, torch=torch.__version__)
    try:
        options = {}
        if device != "cpu":
            torch.cuda.set_device(0)
            options["device_id"] = torch.device("cuda", 0)
        store = dist.TCPStore(params["address"], int(params["port"]), world, rank == 0,
                              timeout=datetime.timedelta(seconds=int(params["connect_timeout"])))
        # A collective that waits longer than the budget has hung: torch ends it (Gloo's timeout, NCCL's watchdog)
        # before the deadline above ends the process.
        dist.init_process_group(backend, store=store, rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=int(params["budget"]) + 30), **options)
        short = room_for(torch, params, world, device)
        if not agree(dist, torch, not short, device):
            result["error"] = (f"no room for the {params['max_bytes']}-byte buffers on this node: {short}" if short
                               else "another rank had no room for the buffers (its own answer says why)")
        else:
            rows, skipped = sweep(dist, torch, params, device, None, world, deadline)
            largest = max(row["bytes"] for row in rows if row["op"] == "all_gather")
            result.update(ok=True, rows=rows, skipped=skipped, pairs=pairs_of(dist, torch, params, device, largest))
        if backend == "nccl":
            result["nccl"] = dict(nccl_library(), version=".".join(str(v) for v in torch.cuda.nccl.version()))
    except Exception as error:  # pylint: disable=broad-except
        result["ok"] = False
        result["error"] = f"{type(error).__name__}: {error}"[:600]
    if backend == "nccl":
        text = ""
        for name in glob.glob(params.get("nccl_log_glob", "/tmp/nccl-link-gate.*.log")):
            with open(name, encoding="utf-8", errors="replace") as log:
                text += log.read()
        result["link"] = transport_from_log(text)
    else:
        result["link"] = {"transport": "Socket", "devices": [os.environ.get("GLOO_SOCKET_IFNAME", "")]}
    emit(params, result)
    # No teardown: a communicator's destruction has hung NCCL after the work was done; the figures are out.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
