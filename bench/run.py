"""`make bench`: speed and memory of the collection on the lab, beside the usual hand procedure.

Runs unattended against the lab (creating it if needed), takes the median of several runs for each
figure, and rewrites docs/benchmarks.md. Nothing here asserts a timing: it measures.
"""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
RAY_ALONE_CAP = int(os.environ.get("BENCH_RAY_ALONE_CAP", "30"))
LAB2 = ("inventories/lab",)
LAB3 = LAB2 + ("inventories/lab-3node",)
LAB4 = LAB3 + ("inventories/lab-4node",)
HEAD_IC, HEAD_MGMT = "198.18.1.12", "198.18.0.180"
ENV = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1")


def log(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} bench: {message}", flush=True)


def playbook(*args: str, inventories=LAB2, playbook_path: str = "site.yml", check: bool = True) -> dict:
    """Run ansible-playbook under GNU time: wall seconds, exit code, changed count, peak controller RSS."""
    with tempfile.NamedTemporaryFile("r") as rss:
        command = ["/usr/bin/time", "-f", "%M", "-o", rss.name, "ansible-playbook", playbook_path]
        for inventory in inventories:
            command += ["-i", inventory]
        started = time.monotonic()
        result = subprocess.run(command + list(args), cwd=REPO, env=ENV, text=True, capture_output=True, check=False)
        seconds = time.monotonic() - started
        peak_kb = int((rss.read().strip().splitlines() or ["0"])[-1])
    if check and result.returncode != 0:
        sys.exit(f"bench: {' '.join(command[5:])} {' '.join(args)} failed:\n{result.stdout[-3000:]}{result.stderr[-2000:]}")
    changed = sum(int(n) for n in re.findall(r"changed=(\d+)", result.stdout))
    return {"seconds": seconds, "rc": result.returncode, "changed": changed, "peak_mb": peak_kb / 1024,
            "output": result.stdout + result.stderr}


def node(host: str, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", "exec", f"inferops-lab-{host}", *argv], text=True, capture_output=True, check=check)


def runtime_image() -> str:
    images = (REPO / "inventories" / "lab" / "group_vars" / "all" / "images.yml").read_text()
    return re.search(r"^vllm_cluster_image: (\S+)", images, re.M).group(1)


def reset(hosts) -> None:
    """Remove every Ray/vLLM container (the collection's and the baseline's), keeping the loaded images."""
    for host in hosts:
        ids = node(host, "docker", "ps", "-aq", "--filter", "label=inferops.vllm_cluster.cluster").stdout.split()
        ids += node(host, "docker", "ps", "-aq", "--filter", "name=^bench-").stdout.split()
        if ids:
            node(host, "docker", "rm", "-f", *ids)


def median(values) -> float:
    return statistics.median(values)


def cold_converge() -> dict:
    ours, baseline = [], []
    image = runtime_image()
    for run in range(RUNS):
        reset(["spark-1", "spark-2"])
        ours.append(playbook("--skip-tags", "vllm")["seconds"])
        reset(["spark-1", "spark-2"])
        started = time.monotonic()
        subprocess.run([str(REPO / "bench" / "baseline-hand.sh"), image, HEAD_IC, "spark-1", "spark-2"], check=True)
        baseline.append(time.monotonic() - started)
        log(f"cold converge run {run + 1}: site.yml {ours[-1]:.1f} s, hand procedure {baseline[-1]:.1f} s")
    reset(["spark-1", "spark-2"])
    return {"ours": median(ours), "baseline": median(baseline)}


def noop_rerun() -> dict:
    playbook()  # converge everything, vLLM included
    runs = [playbook() for _run in range(RUNS)]
    log(f"no-op re-runs: {[round(r['seconds'], 1) for r in runs]} s, changed {[r['changed'] for r in runs]}")
    return {"seconds": median(r["seconds"] for r in runs), "changed": max(r["changed"] for r in runs)}


def restarts() -> dict:
    vllm = [playbook("--tags", "vllm", "-e", "vllm_cluster_restart=true")["seconds"] for _run in range(RUNS)]
    ray = [playbook("--tags", "ray", "-e", "vllm_cluster_restart=true")["seconds"] for _run in range(RUNS)]
    log(f"restarts: vllm {vllm}, ray {ray}")
    return {"vllm": median(vllm), "ray": median(ray)}


def footprint() -> dict:
    usage = {}
    for host, container in (("spark-1", "vllm-cluster-ray-head"), ("spark-2", "vllm-cluster-ray-worker"), ("spark-1", "vllm-cluster-vllm")):
        stats = node(host, "docker", "stats", "--no-stream", "--format", "{{json .}}", container).stdout
        usage[container] = json.loads(stats)["MemUsage"].split(" / ")[0]
    return usage


RAY_ALONE_PLACEMENT = """
import sys, time, ray
from ray.util.placement_group import placement_group
ray.init(address="auto", logging_level="ERROR")
pg = placement_group([{"node:%s" % sys.argv[1]: 0.001, "CPU": 1}])
started = time.monotonic()
placed = pg.wait(timeout_seconds=int(sys.argv[2]))
print("placed" if placed else "pending", round(time.monotonic() - started, 1))
"""


def incident() -> dict:
    image = runtime_image()
    ours, alone = [], []
    for run in range(RUNS):
        reset(["spark-1", "spark-2"])
        # as on the Sparks: the head started without --node-ip-address, the worker joined over the interconnect
        node("spark-1", "docker", "run", "-d", "--name", "bench-ray-head", "--network", "host", "--init", image, "ray", "start",
             "--head", "--port=6379", "--num-gpus=1", "--object-store-memory=268435456", "--disable-usage-stats", "--block")
        for _attempt in range(60):
            if node("spark-1", "docker", "exec", "bench-ray-head", "ray", "health-check", f"--address={HEAD_MGMT}:6379", check=False).returncode == 0:
                break
            time.sleep(2)
        node("spark-2", "docker", "run", "-d", "--name", "bench-ray-worker", "--network", "host", "--init", image, "ray", "start",
             f"--address={HEAD_IC}:6379", "--num-gpus=1", "--object-store-memory=268435456", "--disable-usage-stats", "--block")
        time.sleep(10)
        # site.yml --tags validate looks for the collection's head container name
        node("spark-1", "docker", "rename", "bench-ray-head", "vllm-cluster-ray-head")
        result = playbook("--tags", "validate", check=False)
        if result["rc"] == 0 or "[F1] spark-1" not in result["output"]:
            sys.exit("bench: validate did not catch the incident:\n" + result["output"][-3000:])
        ours.append(result["seconds"])
        answer = node("spark-1", "docker", "exec", "vllm-cluster-ray-head", "python3", "-c", RAY_ALONE_PLACEMENT,
                      HEAD_IC, str(RAY_ALONE_CAP)).stdout.split()
        alone.append((answer[0], float(answer[1])))
        log(f"incident run {run + 1}: validate failed after {ours[-1]:.1f} s; Ray alone: {answer}")
    reset(["spark-1", "spark-2"])
    errored = [seconds for state, seconds in alone if state == "placed"]
    return {"ours": median(ours), "alone_cap": RAY_ALONE_CAP, "alone_errored": len(errored), "runs": len(alone)}


def scale() -> dict:
    figures = {}
    for count, inventories in ((2, LAB2), (3, LAB3), (4, LAB4)):
        playbook(inventories=inventories, playbook_path="lab/playbooks/create.yml")
        playbook("--skip-tags", "vllm", inventories=inventories)
        runs = [playbook("--tags", "validate", inventories=inventories) for _run in range(RUNS)]
        figures[count] = {"seconds": median(r["seconds"] for r in runs), "peak_mb": max(r["peak_mb"] for r in runs)}
        log(f"scale {count} nodes: {figures[count]}")
    return figures


def machine() -> str:
    memory_kb = int(re.search(r"MemTotal:\s+(\d+)", pathlib.Path("/proc/meminfo").read_text()).group(1))
    return f"{os.cpu_count()} vCPU, {memory_kb / 1024 / 1024:.0f} GiB, Linux {platform.release()}, Python {platform.python_version()}"


def write_report(results: dict, started: float) -> None:
    cold, noop, rst, inc, sc, fp = (results[k] for k in ("cold", "noop", "restarts", "incident", "scale", "footprint"))
    lines = [
        "# Benchmarks",
        "",
        f"Written by `make bench` on {datetime.date.today().isoformat()}, {machine()}; the lab (Docker-in-Docker nodes,",
        f"Ray {results['ray_version']}, vLLM CPU build). Medians of {RUNS} runs; the whole run took {(time.monotonic() - started) / 60:.1f} min.",
        "Timings are wall-clock seconds on a shared 2-core machine: compare rows, not machines.",
        "",
        "| figure | this collection | baseline | ratio |",
        "|---|---|---|---|",
        f"| cold converge, images loaded -> validated 2-node Ray cluster (`site.yml --skip-tags vllm` vs `bench/baseline-hand.sh`) "
        f"| {cold['ours']:.1f} s | {cold['baseline']:.1f} s (docker run + ray start by hand, poll `ray status`, no checks) "
        f"| {cold['ours'] / cold['baseline']:.1f}x |",
        f"| no-op re-run of `site.yml` on a converged lab (vLLM included) | {noop['seconds']:.1f} s, changed={noop['changed']} | - | - |",
        f"| time to detect the incident (head on the management address, management blocked) | validate fails after {inc['ours']:.1f} s "
        f"| Ray alone: the same placement request (`node:<head interconnect ip>`) surfaced no error within {inc['alone_cap']} s "
        f"in {inc['runs'] - inc['alone_errored']} of {inc['runs']} runs (it stays pending) | - |",
        f"| restart vLLM only (`--tags vllm -e vllm_cluster_restart=true`, until it answers) | {rst['vllm']:.1f} s | - | - |",
        f"| restart Ray (`--tags ray -e vllm_cluster_restart=true`: vLLM stopped, head, workers, validation, vLLM answers) "
        f"| {rst['ray']:.1f} s | - | {rst['ray'] / rst['vllm']:.1f}x the vLLM restart |",
        "",
        "## Scale: the validate step (`site.yml --tags validate`) by cluster size",
        "",
        "| nodes | validate step | controller peak RSS (ansible-playbook and its forks) |",
        "|---|---|---|",
    ]
    for count, figure in sc.items():
        lines.append(f"| {count} | {figure['seconds']:.1f} s | {figure['peak_mb']:.0f} MiB |")
    lines += [
        "",
        "## Node footprint (memory of the lab's containers, `docker stats`)",
        "",
        "| container | memory |",
        "|---|---|",
    ]
    lines += [f"| {name} | {usage} |" for name, usage in fp.items()]
    lines.append("")
    (REPO / "docs" / "benchmarks.md").write_text("\n".join(lines))


def main() -> None:
    started = time.monotonic()
    log("bringing the 2-node lab up (images loaded)")
    playbook(playbook_path="lab/playbooks/create.yml")
    playbook("--tags", "docker_runtime")
    results = {"ray_version": node("spark-1", "docker", "run", "--rm", runtime_image(), "python3", "-c",
                                   "import ray; print(ray.__version__)").stdout.strip()}
    results["cold"] = cold_converge()
    results["noop"] = noop_rerun()
    results["footprint"] = footprint()
    results["restarts"] = restarts()
    results["incident"] = incident()
    results["scale"] = scale()
    write_report(results, started)
    log(f"done in {(time.monotonic() - started) / 60:.1f} min: docs/benchmarks.md")


if __name__ == "__main__":
    main()
