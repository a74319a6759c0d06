"""The weights-staging rows of docs/benchmarks.md (role model_stage, F17), on a running two-node lab: a synthetic
512 MB model put in spark-1's hub cache, staged to spark-2 over the interconnect, then staged again with nothing to
do; beside a plain HTTP copy of the same files over the same network (no verification) and a re-check by hashing
every file, which is what a verifying re-run costs without the kept hashes. Beside the speed: how many bytes the
worker's copy reads from files per byte staged, sampled from its /proc/PID/io, and how much of what was staged each
node's page cache still holds afterwards (fincore: on unified memory that is memory vLLM lacks, F18), each beside
the plain copy's. Run by bench/run.py; alone (`python3 bench/weights.py`)
it rewrites only its own section of docs/benchmarks.md."""
from __future__ import annotations

import pathlib
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from run import HEAD_IC, REPO, RUNS, log, node, playbook, rewrite_section  # noqa: E402  (bench/run.py's helpers)

MODEL = "inferops-lab/bench-weights"
HF_HOME = "/var/lib/inferops-vllm-cluster/huggingface"
REPO_DIR = f"{HF_HOME}/hub/models--inferops-lab--bench-weights"
FILES, FILE_MB = 4, 128
HEADER = "## Weights staging"


def seed() -> str:
    """The synthetic model on spark-1, laid out as a download leaves it (lab/playbooks/files/put_in_hub_cache.py)."""
    script = (REPO / "lab" / "playbooks" / "files" / "put_in_hub_cache.py").read_text()
    node("spark-1", "sh", "-c", f"rm -rf /tmp/bench-src {REPO_DIR} && mkdir -p /tmp/bench-src && for i in "
                                f"$(seq 1 {FILES}); do head -c {FILE_MB}M /dev/urandom > /tmp/bench-src/model-$i.safetensors;"
                                " done && echo '{}' > /tmp/bench-src/config.json")
    commit = node("spark-1", "python3", "-c", script, "/tmp/bench-src", HF_HOME, MODEL).stdout.strip()
    node("spark-1", "rm", "-rf", "/tmp/bench-src")
    return commit


def stage() -> dict:
    return playbook("--tags", "weights", "-e", f"vllm_server_model={MODEL}")


# Every 0.1 s, the file-read counter of each copy process on spark-2 (model_fetch runs inside its AnsiballZ
# wrapper's own process): the last sample of the busiest one is what the copy read from files. /proc/PID/io's rchar
# counts read(2) and pread(2): a file re-read to hash it shows, a socket's receives (recv_into) do not.
SAMPLER = ("while true; do for p in $(pgrep -f 'python.*AnsiballZ_model_fetch'); do "
           "r=$(sed -n 's/^rchar: //p' /proc/$p/io 2>/dev/null); [ -n \"$r\" ] && echo \"$p $r\"; done; sleep 0.1; done")


def resident_mb(host: str, pattern: str) -> float:
    """How much of the files `pattern` names is in the node's page cache (fincore), in MB."""
    out = node(host, "sh", "-c", f"fincore --bytes --noheadings --output RES {pattern}").stdout.split()
    return sum(int(count) for count in out) / 1e6


def stage_measured(commit: str) -> tuple[dict, float, dict[str, float]]:
    """stage(), with what the worker's copy read from files (bytes, sampled) and how much of the staged files each
    node's page cache holds afterwards (MB)."""
    sampler = subprocess.Popen(["docker", "exec", "inferops-lab-spark-2", "sh", "-c", SAMPLER], text=True,
                               stdout=subprocess.PIPE)
    try:
        result = stage()
    finally:
        sampler.kill()
    last: dict[str, int] = {}
    for line in sampler.communicate()[0].splitlines():
        pid, count = line.split()
        last[pid] = int(count)
    cached = {"spark-1": resident_mb("spark-1", f"{REPO_DIR}/blobs/*"),
              "spark-2": resident_mb("spark-2", f"{REPO_DIR}/snapshots/{commit}/*")}
    return result, float(max(last.values(), default=0)), cached


def plain_copy(commit: str) -> tuple[float, float, dict[str, float]]:
    """The same files over the same network with no verification: python's http.server on spark-1's interconnect
    address, read in sequence on spark-2 (the lab nodes have neither rsync nor ssh). Returns its seconds, the bytes
    its reader read from files (its own /proc/self/io) and how much of the files each node's page cache holds
    afterwards (MB)."""
    snapshot = f"{REPO_DIR}/snapshots/{commit}"
    server = f"python3 -m http.server --bind {HEAD_IC} 29599 --directory {snapshot}"
    node("spark-1", "sh", "-c", f"nohup {server} >/dev/null 2>&1 & echo $! > /tmp/bench-http.pid")
    time.sleep(1)
    names = node("spark-1", "sh", "-c", f"cd {snapshot} && ls").stdout.split()
    fetch = ("import sys, shutil, urllib.request\n"
             "for name in sys.argv[2:]:\n"
             "    with urllib.request.urlopen(sys.argv[1] + name) as r, open('/tmp/bench-copy/' + name, 'wb') as f:\n"
             "        shutil.copyfileobj(r, f, 8 << 20)\n"
             "print(open('/proc/self/io').read().split()[1])\n")
    node("spark-2", "sh", "-c", "rm -rf /tmp/bench-copy && mkdir /tmp/bench-copy")
    started = time.monotonic()
    read = float(node("spark-2", "python3", "-c", fetch, f"http://{HEAD_IC}:29599/", *names).stdout.split()[-1])
    seconds = time.monotonic() - started
    grown = {"spark-1": resident_mb("spark-1", f"{REPO_DIR}/blobs/*"), "spark-2": resident_mb("spark-2", "/tmp/bench-copy/*")}
    node("spark-1", "sh", "-c", "kill $(cat /tmp/bench-http.pid)")
    node("spark-2", "rm", "-rf", "/tmp/bench-copy")
    return seconds, read, grown


def rehash(commit: str) -> float:
    started = time.monotonic()
    node("spark-2", "sh", "-c", f"sha256sum {REPO_DIR}/snapshots/{commit}/* > /dev/null")
    return time.monotonic() - started


def measure() -> dict:
    commit = seed()
    megabytes = FILES * FILE_MB * 1.048576 + 0.000003
    first, noop, baseline, hashing, rates = [], [], [], [], []
    reads, plain_reads, cache, plain_cache = [], [], [], []
    for run in range(RUNS):
        node("spark-2", "rm", "-rf", REPO_DIR, f"{HF_HOME}/inferops-weights")
        result, read, grown = stage_measured(commit)
        reads.append(read / (megabytes * 1e6))
        cache.append(grown)
        first.append(result["seconds"])
        copied = re.search(r"\(([\d.]+) MB in ([\d.]+) s", " ".join(result["output"].split()))
        rates.append(float(copied.group(1)) / float(copied.group(2)))
        again = stage()
        assert "nothing to copy" in again["output"] and again["changed"] == 0, again["output"][-2000:]
        noop.append(again["seconds"])
        seconds, read, grown = plain_copy(commit)
        baseline.append(seconds)
        plain_reads.append(read / (megabytes * 1e6))
        plain_cache.append(grown)
        hashing.append(rehash(commit))
        log(f"weights run {run + 1}: staged {first[-1]:.1f} s ({rates[-1]:.0f} MB/s copying, {reads[-1]:.2f} bytes read "
            f"from files per byte, cached {cache[-1]['spark-1']:.0f}/{cache[-1]['spark-2']:.0f} MB), no-op {noop[-1]:.1f} s, "
            f"plain copy {baseline[-1]:.1f} s ({plain_reads[-1]:.2f} read from files per byte, cached "
            f"{plain_cache[-1]['spark-1']:.0f}/{plain_cache[-1]['spark-2']:.0f} MB), re-hash {hashing[-1]:.1f} s")
    node("spark-1", "rm", "-rf", REPO_DIR, f"{HF_HOME}/inferops-weights/models--inferops-lab--bench-weights--{commit}.sha256.json")
    node("spark-2", "rm", "-rf", REPO_DIR, f"{HF_HOME}/inferops-weights/models--inferops-lab--bench-weights--{commit}.sha256.json")
    return {"mb": megabytes, "first": statistics.median(first), "rate": statistics.median(rates),
            "noop": statistics.median(noop), "baseline": statistics.median(baseline),
            "rehash": statistics.median(hashing), "reads": statistics.median(reads),
            "plain_reads": statistics.median(plain_reads),
            "cache": {host: statistics.median(c[host] for c in cache) for host in ("spark-1", "spark-2")},
            "plain_cache": {host: statistics.median(c[host] for c in plain_cache) for host in ("spark-1", "spark-2")}}


def section(figures: dict) -> list[str]:
    mb = figures["mb"]
    return [
        HEADER,
        "",
        f"A synthetic model of {FILES} x {FILE_MB} MiB random files ({mb:.0f} MB) in spark-1's hub cache, staged to spark-2 "
        "over the interconnect network (`site.yml --tags weights`; management is blocked between the lab nodes).",
        "",
        "| figure | this collection | baseline | ratio |",
        "|---|---|---|---|",
        f"| copy to spark-2 over the interconnect | {figures['rate']:.0f} MB/s while copying (each file sha256-verified "
        f"on arrival); the whole staging run {figures['first']:.1f} s (plan, space check, server, copy, re-check) "
        f"| {mb / figures['baseline']:.0f} MB/s: plain HTTP copy of the same files, {figures['baseline']:.1f} s, "
        f"no verification | {figures['rate'] / (mb / figures['baseline']):.2f}x the throughput |",
        f"| re-run with nothing to copy | {figures['noop']:.1f} s, 0 bytes, changed=0: Ansible's own overhead, the "
        f"same for any size (hashes kept by size and mtime: metadata only) | {figures['rehash']:.1f} s: `sha256sum` of "
        f"every file on spark-2, what a verifying re-run costs without kept hashes; it grows with the model: "
        f"{125_000 / (mb / figures['rehash']) / 60:.0f} min for a 125 GB checkpoint at this rate | - |",
        f"| bytes the worker's copy read from files per byte staged (/proc/PID/io `rchar`: read(2), not the socket; "
        f"sampled every 0.1 s) | {figures['reads']:.2f}: each file hashed as it arrives (the rest is the module's "
        f"own start: Python reading its code); before #31 each file was read again to hash it, 1.0 more | "
        f"{figures['plain_reads']:.2f}: the plain copy's reader | - |",
        f"| of the {mb:.0f} MB staged, what the page cache holds afterwards (`fincore`) | spark-1 "
        f"{figures['cache']['spark-1']:.0f} MB, spark-2 {figures['cache']['spark-2']:.0f} MB: pages dropped once "
        f"hashed, sent or written (on unified memory, memory vLLM gets: F18) | spark-1 "
        f"{figures['plain_cache']['spark-1']:.0f} MB, spark-2 {figures['plain_cache']['spark-2']:.0f} MB: the plain "
        f"copy | - |",
        "",
    ]


if __name__ == "__main__":
    rewrite_section(HEADER, section(measure()))
    log("docs/benchmarks.md: weights staging rows rewritten")
