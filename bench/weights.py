"""The weights-staging rows of docs/benchmarks.md (role model_stage, F17), on a running two-node lab: a synthetic
512 MB model put in spark-1's hub cache, staged to spark-2 over the interconnect, then staged again with nothing to
do; beside a plain HTTP copy of the same files over the same network (no verification) and a re-check by hashing
every file, which is what a verifying re-run costs without the kept hashes. Run by bench/run.py; alone
(`python3 bench/weights.py`) it rewrites only its own section of docs/benchmarks.md."""
from __future__ import annotations

import pathlib
import re
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from run import HEAD_IC, REPO, RUNS, log, node, playbook  # noqa: E402  (bench/run.py's helpers)

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


def plain_copy(commit: str) -> float:
    """The same files over the same network with no verification: python's http.server on spark-1's interconnect
    address, read in sequence on spark-2 (the lab nodes have neither rsync nor ssh)."""
    snapshot = f"{REPO_DIR}/snapshots/{commit}"
    server = f"python3 -m http.server --bind {HEAD_IC} 29599 --directory {snapshot}"
    node("spark-1", "sh", "-c", f"nohup {server} >/dev/null 2>&1 & echo $! > /tmp/bench-http.pid")
    time.sleep(1)
    names = node("spark-1", "sh", "-c", f"cd {snapshot} && ls").stdout.split()
    fetch = ("import sys, shutil, urllib.request\n"
             "for name in sys.argv[2:]:\n"
             "    with urllib.request.urlopen(sys.argv[1] + name) as r, open('/tmp/bench-copy/' + name, 'wb') as f:\n"
             "        shutil.copyfileobj(r, f, 8 << 20)\n")
    node("spark-2", "sh", "-c", "rm -rf /tmp/bench-copy && mkdir /tmp/bench-copy")
    started = time.monotonic()
    node("spark-2", "python3", "-c", fetch, f"http://{HEAD_IC}:29599/", *names)
    seconds = time.monotonic() - started
    node("spark-1", "sh", "-c", "kill $(cat /tmp/bench-http.pid)")
    node("spark-2", "rm", "-rf", "/tmp/bench-copy")
    return seconds


def rehash(commit: str) -> float:
    started = time.monotonic()
    node("spark-2", "sh", "-c", f"sha256sum {REPO_DIR}/snapshots/{commit}/* > /dev/null")
    return time.monotonic() - started


def measure() -> dict:
    commit = seed()
    megabytes = FILES * FILE_MB * 1.048576 + 0.000003
    first, noop, baseline, hashing, rates = [], [], [], [], []
    for run in range(RUNS):
        node("spark-2", "rm", "-rf", REPO_DIR, f"{HF_HOME}/inferops-weights")
        result = stage()
        first.append(result["seconds"])
        copied = re.search(r"\(([\d.]+) MB in ([\d.]+) s", " ".join(result["output"].split()))
        rates.append(float(copied.group(1)) / float(copied.group(2)))
        again = stage()
        assert "nothing to copy" in again["output"] and again["changed"] == 0, again["output"][-2000:]
        noop.append(again["seconds"])
        baseline.append(plain_copy(commit))
        hashing.append(rehash(commit))
        log(f"weights run {run + 1}: staged {first[-1]:.1f} s ({rates[-1]:.0f} MB/s copying), no-op {noop[-1]:.1f} s, "
            f"plain copy {baseline[-1]:.1f} s, re-hash {hashing[-1]:.1f} s")
    node("spark-1", "rm", "-rf", REPO_DIR, f"{HF_HOME}/inferops-weights/models--inferops-lab--bench-weights--{commit}.sha256.json")
    node("spark-2", "rm", "-rf", REPO_DIR, f"{HF_HOME}/inferops-weights/models--inferops-lab--bench-weights--{commit}.sha256.json")
    return {"mb": megabytes, "first": statistics.median(first), "rate": statistics.median(rates),
            "noop": statistics.median(noop), "baseline": statistics.median(baseline),
            "rehash": statistics.median(hashing)}


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
        "",
    ]


def rewrite(figures: dict) -> None:
    """Replaces this section of docs/benchmarks.md (or appends it), leaving the other rows as they were."""
    path = REPO / "docs" / "benchmarks.md"
    text = path.read_text()
    lines = section(figures)
    if HEADER in text:
        start = text.index(HEADER)
        following = text.find("\n## ", start + len(HEADER))
        text = text[:start] + "\n".join(lines) + (text[following + 1:] if following >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + "\n".join(lines)
    path.write_text(text)


if __name__ == "__main__":
    rewrite(measure())
    log("docs/benchmarks.md: weights staging rows rewritten")
