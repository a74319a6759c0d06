"""The link gate's rows of docs/benchmarks.md (role link_gate, F25), on a running two-node lab: the gate's own
figures (Gloo over the interconnect, one rank per node in the runtime image, bus bandwidth as nccl-tests computes it)
beside a plain TCP stream between the same two nodes over the same network (python sockets, one stream each way:
the physical baseline of the link, as iperf3 would measure it); and what the gate costs a run, measuring against
reading its record. Run by bench/run.py; alone (`python3 bench/link.py`) it rewrites only its own section of
docs/benchmarks.md."""
from __future__ import annotations

import json
import pathlib
import statistics
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from run import HEAD_IC, RECORDS, RUNS, log, node, playbook, rewrite_section  # noqa: E402  (bench/run.py's helpers)

HEADER = "## Link gate"
WORKER_IC = "198.18.1.13"
MAX_BYTES = 64 << 20
STREAM_MB = 512
RECEIVER = r"""
import socket, sys, time
listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind((sys.argv[1], 0))  # the kernel's choice: vLLM serves meanwhile, its ranks hold ports of their own
listener.listen(1)
print(listener.getsockname()[1], flush=True)
connection, _ = listener.accept()
received, started = 0, None
while True:
    block = connection.recv(1 << 20)
    if not block:
        break
    started = started or time.perf_counter()
    received += len(block)
print(received, time.perf_counter() - started)
"""
SENDER = r"""
import socket, sys, time
for _ in range(50):
    try:
        connection = socket.create_connection((sys.argv[1], int(sys.argv[2])))
        break
    except OSError:
        time.sleep(0.1)
block = b"\0" * (1 << 20)
for _ in range(int(sys.argv[3])):
    connection.sendall(block)
connection.close()
"""


def tcp_stream(sender: str, receiver: str, address: str) -> float:
    """GB/s of one TCP stream from sender to receiver's interconnect address, measured by the receiver."""
    listening = subprocess.Popen(["docker", "exec", f"inferops-lab-{receiver}", "python3", "-c", RECEIVER, address],
                                 text=True, stdout=subprocess.PIPE)
    port = listening.stdout.readline().strip()
    node(sender, "python3", "-c", SENDER, address, port, str(STREAM_MB))
    received, seconds = listening.communicate(timeout=120)[0].split()
    return int(received) / float(seconds) / 1e9


def gate(*extra: str) -> tuple[dict, float]:
    started = time.monotonic()
    playbook("--tags", "link", *extra)
    seconds = time.monotonic() - started
    # the gate writes its record there when it measured (a run that only reads it leaves it as it was)
    record = RECORDS / "link-gate.json"
    return (json.loads(record.read_text()) if record.exists() else {}), seconds


def measure() -> dict:
    figures: dict = {"reduce": [], "gather": [], "tcp_12": [], "tcp_21": [], "measuring": [], "reading": []}
    for unused in range(RUNS):
        record, seconds = gate("-e", "vllm_cluster_link_gate=always", "-e", f"link_gate_max_bytes={MAX_BYTES}")
        rows = {row["op"]: row for row in record["rows"] if row["bytes"] == MAX_BYTES}
        figures["reduce"].append(rows["all_reduce"]["busbw"])
        figures["gather"].append(rows["all_gather"]["busbw"])
        figures["measuring"].append(seconds)
        figures["reading"].append(gate("-e", f"link_gate_max_bytes={MAX_BYTES}")[1])
        figures["tcp_21"].append(tcp_stream("spark-2", "spark-1", HEAD_IC))
        figures["tcp_12"].append(tcp_stream("spark-1", "spark-2", WORKER_IC))
    log(f"link gate: {figures}")
    return {name: statistics.median(values) for name, values in figures.items()}


def section(figures: dict) -> list[str]:
    size = f"{MAX_BYTES >> 20} MiB"
    tcp = min(figures["tcp_12"], figures["tcp_21"])
    return [
        HEADER,
        "",
        f"The gate over the lab's interconnect (a Docker bridge between the two nodes; Gloo on this machine's CPUs, one "
        f"rank per node in the runtime image), `--tags link -e vllm_cluster_link_gate=always -e "
        f"link_gate_max_bytes={MAX_BYTES}`, beside one plain TCP stream of {STREAM_MB} MiB between the same nodes' "
        "interconnect addresses (python sockets, the physical baseline as iperf3 would take it). Medians of "
        f"{RUNS}. Bus bandwidth as nccl-tests computes it: all_reduce x 2(n-1)/n, all_gather x (n-1)/n of the "
        "algorithm bandwidth; for two ranks the all_reduce's bus figure is what each direction of the link carried.",
        "",
        "| figure | link gate | baseline | ratio |",
        "|---|---|---|---|",
        f"| all_reduce bus bandwidth at {size} | {figures['reduce']:.2f} GB/s | {tcp:.2f} GB/s: one TCP stream, the "
        f"slower direction (spark-1 -> spark-2 {figures['tcp_12']:.2f}, spark-2 -> spark-1 {figures['tcp_21']:.2f}) "
        f"| {figures['reduce'] / tcp:.2f}x |",
        f"| all_gather bus bandwidth at {size} | {figures['gather']:.2f} GB/s | {tcp:.2f} GB/s | "
        f"{figures['gather'] / tcp:.2f}x |",
        f"| `site.yml --tags link` (preflight included), measuring | {figures['measuring']:.1f} s | "
        f"{figures['reading']:.1f} s: the same run when the record matches (no measuring: a no-op run's cost) | "
        f"+{figures['measuring'] - figures['reading']:.1f} s |",
        "",
    ]


if __name__ == "__main__":
    rewrite_section(HEADER, section(measure()))
    log("docs/benchmarks.md: link gate rows rewritten")
