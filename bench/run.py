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
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
RAY_ALONE_CAP = int(os.environ.get("BENCH_RAY_ALONE_CAP", "20"))
LAB2 = ("inventories/lab",)
LAB3 = LAB2 + ("inventories/lab-3node",)
LAB4 = LAB3 + ("inventories/lab-4node",)
HEAD_IC, HEAD_MGMT = "198.18.1.12", "198.18.0.180"
ENV = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
# Where the lab's inventory keeps the cluster's records (vllm_cluster_records_dir): the link gate's, bench.yml's.
RECORDS = pathlib.Path(os.environ.get("INFEROPS_CACHE_DIR") or pathlib.Path.home() / ".cache/inferops-vllm-cluster") \
    / "lab-records"


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


def rewrite_section(header: str, lines: list[str]) -> None:
    """Replaces one section of docs/benchmarks.md (from its header to the next), or appends it, leaving the other rows
    as they were: a part measured alone (bench/weights.py, bench/link.py) rewrites only its own."""
    path = REPO / "docs" / "benchmarks.md"
    text = path.read_text()
    if header in text:
        start = text.index(header)
        following = text.find("\n## ", start + len(header))
        text = text[:start] + "\n".join(lines).rstrip("\n") + ("\n\n" + text[following + 1:] if following >= 0 else "\n")
    else:
        text = text.rstrip("\n") + "\n\n" + "\n".join(lines)
    path.write_text(text)


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


def lab_volume(host: str) -> str:
    return f"inferops-lab-{host}-docker"


def seed_image_store(source: str, host: str) -> None:
    """Give a node that does not exist yet the images of a node that has them, without `docker load`.

    Loading the 2.7 GB runtime image is single-threaded unpacking and hashing: ~40 s per node here,
    the largest part of bringing four nodes up. An image's unpacked layers are never written once
    loaded (containers write to their own upper layer), so the new node's Docker storage volume gets
    hard links to the source's layers and a copy of its image metadata: what the node's engine then
    finds at start is a store with the image loaded, as after `lab_keep_images`. Nothing else of the
    source is copied (no containers, networks or engine ID): the source must run no container yet.
    """
    volume = lab_volume(host)
    if subprocess.run(["docker", "volume", "inspect", volume], capture_output=True, check=False).returncode == 0:
        sys.exit(f"bench: {volume} exists already; run make lab-down first")
    if node(source, "docker", "ps", "-aq").stdout.strip():
        sys.exit(f"bench: {source} runs containers; its image store cannot be copied now")
    subprocess.run(["docker", "volume", "create", "--label", "inferops.vllm_cluster.lab=inferops-lab", volume],
                   check=True, capture_output=True)
    mountpoints = [subprocess.run(["docker", "volume", "inspect", "--format", "{{.Mountpoint}}", name], text=True,
                                  capture_output=True, check=True).stdout.strip() for name in (lab_volume(source), volume)]
    origin, target = (pathlib.Path(path) for path in mountpoints)
    shutil.copytree(origin / "image", target / "image", symlinks=True)
    shutil.copytree(origin / "overlay2", target / "overlay2", symlinks=True, copy_function=os.link)


def median(values) -> float:
    return statistics.median(values)


def cold_converge() -> dict:
    """Per run: the hand procedure from no container, then site.yml from no container. Ends converged."""
    ours, baseline = [], []
    image = runtime_image()
    for run in range(RUNS):
        reset(["spark-1", "spark-2"])
        started = time.monotonic()
        subprocess.run([str(REPO / "bench" / "baseline-hand.sh"), image, HEAD_IC, "spark-1", "spark-2"], check=True)
        baseline.append(time.monotonic() - started)
        reset(["spark-1", "spark-2"])
        ours.append(playbook("--skip-tags", "vllm")["seconds"])
        log(f"cold converge run {run + 1}: site.yml {ours[-1]:.1f} s, hand procedure {baseline[-1]:.1f} s")
    return {"ours": median(ours), "baseline": median(baseline)}


def validate_step(inventories) -> dict:
    runs = [playbook("--tags", "validate", inventories=inventories) for _run in range(RUNS)]
    return {"seconds": median(r["seconds"] for r in runs), "peak_mb": max(r["peak_mb"] for r in runs)}


def noop_rerun() -> dict:
    runs = [playbook() for _run in range(RUNS)]
    log(f"no-op re-runs: {[round(r['seconds'], 1) for r in runs]} s, changed {[r['changed'] for r in runs]}")
    return {"seconds": median(r["seconds"] for r in runs), "changed": max(r["changed"] for r in runs)}


def restarts() -> dict:
    ray = [playbook("--tags", "ray", "-e", "vllm_cluster_restart=true")["seconds"] for _run in range(RUNS)]
    log(f"restarts: ray {[round(r, 1) for r in ray]} s")
    return {"ray": median(ray)}


# The lab serves tensor parallel 2 over Ray (one rank per node); its earlier single-node setup is the baseline.
TP1 = ("-e", "vllm_server_tensor_parallel_size=1", "-e", "vllm_cluster_executor=uni")


def serving(extra: tuple[str, ...]) -> dict:
    """vLLM from no container to its first completion (the vLLM play ends with a smoke completion), and
    its restart until it answers again, with the lab's inventory plus `extra`."""
    cold, restart = [], []
    for _run in range(RUNS):
        node("spark-1", "docker", "rm", "-f", "vllm-cluster-vllm")
        cold.append(playbook("--tags", "vllm", *extra)["seconds"])
    for _run in range(RUNS):
        restart.append(playbook("--tags", "vllm", "-e", "vllm_cluster_restart=true", *extra)["seconds"])
    return {"cold": median(cold), "restart": median(restart), "runs": [cold, restart]}


def tensor_parallel() -> dict:
    """TP=2 across both nodes (the lab's inventory) beside TP=1 on the head alone, to the first completion and under
    the benchmark (bench/throughput.py); ends at TP=2."""
    import throughput  # imports this module's helpers: loaded once this one is
    figures = {1: serving(TP1)}
    figures[1]["bench"] = throughput.bench(TP1)
    figures[2] = serving(())
    figures[2]["bench"] = throughput.bench(())
    log(f"serving TP=1 {figures[1]['runs']} s, TP=2 {figures[2]['runs']} s (cold to first completion, restarts)")
    return figures


def footprint() -> dict:
    usage = {}
    for host, container in (("spark-1", "vllm-cluster-ray-head"), ("spark-2", "vllm-cluster-ray-worker"), ("spark-1", "vllm-cluster-vllm")):
        # (vLLM's rank on each node runs inside that node's Ray container: its memory is counted there)
        stats = node(host, "docker", "stats", "--no-stream", "--format", "{{json .}}", container).stdout
        usage[container] = json.loads(stats)["MemUsage"].split(" / ")[0]
    return usage


# Several placement requests for the head's node:<interconnect ip>, as vLLM's bundle 0 asks, waited
# for together: each either places or is still pending when the cap runs out.
RAY_ALONE_PLACEMENT = """
import sys, time, ray
from ray.util.placement_group import placement_group
ray.init(address="auto", logging_level="ERROR")
groups = [placement_group([{"node:%s" % sys.argv[1]: 0.001, "CPU": 0.01}]) for _ in range(int(sys.argv[3]))]
started = time.monotonic()
ready, pending = ray.wait([g.ready() for g in groups], num_returns=len(groups), timeout=int(sys.argv[2]))
print(len(ready), len(pending), round(time.monotonic() - started, 1))
"""


ALIVE_NODES = """
import ray
ray.init(address="auto", logging_level="ERROR")
print(sum(1 for n in ray.nodes() if n["Alive"]))
"""


def vllm_pg_wait_timeout(container: str) -> str:
    """How long vLLM's Ray executor waits for its placement group before raising, read in a running container."""
    # read from the source, not imported: importing vLLM costs more than a dozen seconds here
    source = node("spark-1", "docker", "exec", container, "python3", "-c",
                  "import importlib.util, pathlib, re; "
                  "source = pathlib.Path(importlib.util.find_spec('vllm').origin).parent / 'v1/executor/ray_utils.py'; "
                  "print(re.search(r'^PG_WAIT_TIMEOUT\\s*=\\s*(\\d+)', source.read_text(), re.M).group(1))",
                  check=False)
    return source.stdout.strip().splitlines()[-1] if source.returncode == 0 else "unknown"


def incident(hosts) -> dict:
    """As on the Sparks: the head started without --node-ip-address (management), the worker joined
    over the interconnect, management blocked between nodes. Set up once; the validate step is read-only."""
    image = runtime_image()
    reset(hosts)
    node("spark-1", "docker", "run", "-d", "--name", "bench-ray-head", "--network", "host", "--init", image, "ray", "start",
         "--head", "--port=6379", "--num-gpus=1", "--object-store-memory=268435456", "--disable-usage-stats", "--block")
    for _attempt in range(60):
        if node("spark-1", "docker", "exec", "bench-ray-head", "ray", "health-check", f"--address={HEAD_MGMT}:6379", check=False).returncode == 0:
            break
        time.sleep(2)
    node("spark-2", "docker", "run", "-d", "--name", "bench-ray-worker", "--network", "host", "--init", image, "ray", "start",
         f"--address={HEAD_IC}:6379", "--num-gpus=1", "--object-store-memory=268435456", "--disable-usage-stats", "--block")
    for _attempt in range(30):
        alive = node("spark-1", "docker", "exec", "bench-ray-head", "python3", "-c", ALIVE_NODES, check=False).stdout
        if alive.strip().splitlines()[-1:] == ["2"]:
            break
        time.sleep(1)
    else:
        sys.exit("bench: the incident's worker never joined the head")
    # site.yml --tags validate looks for the collection's head container name
    node("spark-1", "docker", "rename", "bench-ray-head", "vllm-cluster-ray-head")
    ours = []
    for run in range(RUNS):
        result = playbook("--tags", "validate", check=False)
        if result["rc"] == 0 or "[F1] spark-1" not in result["output"]:
            sys.exit("bench: validate did not catch the incident:\n" + result["output"][-3000:])
        ours.append(result["seconds"])
        log(f"incident run {run + 1}: validate failed after {ours[-1]:.1f} s")
    answer = node("spark-1", "docker", "exec", "vllm-cluster-ray-head", "python3", "-c", RAY_ALONE_PLACEMENT,
                  HEAD_IC, str(RAY_ALONE_CAP), str(RUNS)).stdout
    placed, pending, waited = answer.strip().splitlines()[-1].split()  # Ray may print its own lines first
    log(f"incident, Ray alone: {placed} placed, {pending} pending after {waited} s")
    vllm_wait = vllm_pg_wait_timeout("vllm-cluster-ray-head")
    reset(hosts)
    return {"ours": median(ours), "alone_cap": RAY_ALONE_CAP, "alone_pending": int(pending), "requests": RUNS,
            "vllm_wait": vllm_wait}


def machine() -> str:
    memory_kb = int(re.search(r"MemTotal:\s+(\d+)", pathlib.Path("/proc/meminfo").read_text()).group(1))
    return f"{os.cpu_count()} vCPU, {memory_kb / 1024 / 1024:.0f} GiB, Linux {platform.release()}, Python {platform.python_version()}"


def write_report(results: dict, minutes: float) -> None:
    import throughput  # bench/throughput.py uses this module's helpers: imported once this one is loaded
    cold, noop, rst, inc, sc, fp, tp = (results[k] for k in ("cold", "noop", "restarts", "incident", "scale", "footprint", "tp"))
    lines = [
        "# Benchmarks",
        "",
        f"Written by `make bench` on {datetime.date.today().isoformat()}, {machine()}; the lab (Docker-in-Docker nodes,",
        f"Ray {results['ray_version']}, vLLM CPU build, the tiny generated model). Medians of {RUNS} runs; the measuring run took",
        f"{minutes:.1f} min in all (4 lab nodes created and loaded with the runtime image once, then removed; spark-3 and",
        "spark-4 stay paused until the scale rows need them).",
        "Timings are wall-clock seconds on a shared 2-core machine: compare rows, not machines.",
        "",
        "| figure | this collection | baseline | ratio |",
        "|---|---|---|---|",
        f"| cold converge, images loaded, no container -> validated 2-node Ray cluster (`site.yml --skip-tags vllm` vs "
        f"`bench/baseline-hand.sh`) | {cold['ours']:.1f} s (preflight, image and Ray checks, bounded waits, validation with "
        f"placement and rendezvous dry-runs) | {cold['baseline']:.1f} s (docker run + ray start by hand, poll `ray status` "
        f"until 2 nodes, no checks) | {cold['ours'] / cold['baseline']:.1f}x |",
        f"| no-op re-run of `site.yml` on a converged lab (vLLM included) | {noop['seconds']:.1f} s, changed={noop['changed']} | - | - |",
        f"| time to detect the incident (head on the management address, worker on the interconnect, management blocked) "
        f"| `site.yml --tags validate` fails naming spark-1 after {inc['ours']:.1f} s "
        f"| Ray alone: {inc['alone_pending']} of {inc['requests']} placement requests for `node:{HEAD_IC}` still pending, "
        f"no error, after {inc['alone_cap']} s; vLLM's Ray executor waits {inc['vllm_wait']} s (`PG_WAIT_TIMEOUT`) before raising "
        f"| - |",
        f"| vLLM from no container to its first completion (`--tags vllm`), tensor parallel 2 over Ray, one rank per node "
        f"| {tp[2]['cold']:.1f} s | {tp[1]['cold']:.1f} s (TP=1, one process on the head, `uni` executor) "
        f"| {tp[2]['cold'] / tp[1]['cold']:.1f}x |",
        f"| restart vLLM only (`--tags vllm -e vllm_cluster_restart=true`, until it answers), TP=2 over Ray "
        f"| {tp[2]['restart']:.1f} s | {tp[1]['restart']:.1f} s (TP=1, `uni`) | {tp[2]['restart'] / tp[1]['restart']:.1f}x |",
        f"| restart Ray (`--tags ray -e vllm_cluster_restart=true`: vLLM stopped, head, worker, validation, vLLM answers) "
        f"| {rst['ray']:.1f} s | - | {rst['ray'] / tp[2]['restart']:.1f}x the vLLM restart |",
        "",
        "## Scale: the validate step (`site.yml --tags validate`, node table and dry-runs) by cluster size",
        "",
        "| nodes | validate step | controller peak RSS (the largest ansible-playbook process, GNU time) |",
        "|---|---|---|",
    ]
    for count, figure in sc.items():
        lines.append(f"| {count} | {figure['seconds']:.1f} s | {figure['peak_mb']:.0f} MiB |")
    lines += [
        "",
        "## Node footprint (memory of the lab's containers, `docker stats`, vLLM serving)",
        "",
        "| container | memory |",
        "|---|---|",
    ]
    lines += [f"| {name} | {usage} |" for name, usage in fp.items()]
    lines.append("")
    lines += throughput.section({layout: tp[layout]["bench"] for layout in (1, 2)})
    lines += results["weights"]["section"]
    lines += results["link"]
    path = REPO / "docs" / "benchmarks.md"
    path.write_text("\n".join(lines + kept_sections(path.read_text(), lines)))


def kept_sections(old: str, lines: list[str]) -> list[str]:
    """The sections of the old docs/benchmarks.md this report does not write (bench/revisions.py's, measured in a
    sitting of their own), kept as they were after the report's."""
    written = {line for line in lines if line.startswith("## ")}
    kept = []
    for section in old.split("\n## ")[1:]:
        if "## " + section.splitlines()[0] not in written:
            kept += ["## " + section.rstrip("\n"), ""]
    return kept


def main() -> None:
    started = time.monotonic()
    import link  # bench/link.py and bench/weights.py use this module's helpers: imported once this one is loaded
    import weights
    # One bring-up for every figure: the runtime image is loaded into spark-1 by the docker_runtime role,
    # the other three nodes start from a copy of that image store (seed_image_store); the figures for
    # two nodes use the first two while the others stand idle.
    log("creating spark-1 and loading the runtime image into it")
    playbook("--limit", "spark-1", inventories=LAB4, playbook_path="lab/playbooks/create.yml")
    # `docker load` by hand, not docker_runtime with --limit spark-1: the role reads the image on every node of the
    # inventory outside --limit (F10), and the other three do not exist yet. docker_runtime runs on all four below.
    archive = re.search(r"^vllm_cluster_image_archive: (\S+)", (REPO / "inventories" / "lab" / "group_vars" / "all" /
                                                                "images.yml").read_text(), re.M).group(1)
    node("spark-1", "docker", "load", "-i", archive)  # the lab mounts the archives into every node
    for host in ("spark-2", "spark-3", "spark-4"):
        seed_image_store("spark-1", host)
    log("creating spark-2, spark-3 and spark-4 on copies of spark-1's image store")
    playbook(inventories=LAB4, playbook_path="lab/playbooks/create.yml")
    # the link gate (also tagged docker_runtime) is bench/link.py's to measure, on two nodes: four on two cores fail it
    playbook("--tags", "docker_runtime", "-e", "vllm_cluster_link_gate=off", inventories=LAB4)
    log(f"lab up after {(time.monotonic() - started) / 60:.1f} min")
    # The nodes kept for the scale rows stand frozen until then: their engines' background work would
    # otherwise share the two cores with every two-node figure.
    subprocess.run(["docker", "pause", "inferops-lab-spark-3", "inferops-lab-spark-4"], check=True, capture_output=True)
    # what docker_runtime read from the image and recorded on the node
    record = node("spark-1", "cat", "/etc/inferops-vllm-cluster/image-ray-version.json").stdout
    results = {"ray_version": json.loads(record)["ray_version"]}
    results["cold"] = cold_converge()
    scale = {2: validate_step(LAB2)}
    log(f"scale 2 nodes: {scale[2]}")
    playbook("--tags", "vllm")
    results["noop"] = noop_rerun()
    results["footprint"] = footprint()
    results["tp"] = tensor_parallel()
    results["restarts"] = restarts()
    staged = weights.measure()
    results["weights"] = {**staged, "section": weights.section(staged)}
    results["link"] = link.section(link.measure())
    node("spark-1", "docker", "rm", "-f", "vllm-cluster-vllm")  # the scale rows compare Ray alone, as the 2-node row
    subprocess.run(["docker", "unpause", "inferops-lab-spark-3", "inferops-lab-spark-4"], check=True, capture_output=True)
    for count, inventories in ((3, LAB3), (4, LAB4)):
        # joining a node whose runtime the bring-up prepared, as an operator would (README, "Operating")
        playbook("--tags", "ray_worker", "--limit", f"spark-{count}", inventories=inventories)
        scale[count] = validate_step(inventories)
        log(f"scale {count} nodes: {scale[count]}")
    results["scale"] = scale
    results["incident"] = incident(["spark-1", "spark-2", "spark-3", "spark-4"])
    minutes = (time.monotonic() - started) / 60
    write_report(results, minutes)
    log(f"done in {minutes:.1f} min: docs/benchmarks.md")


if __name__ == "__main__":
    main()
