"""The head's staging server and the workers' copies on the running lab (#31 items 4, 6, 7, 8, 10): who may hold
the port, what an interrupted run leaves behind, a shard large enough that hashing it outlasts the server's idle
time, the page cache after staging, what a no-op run trusts, and a download container left behind. Each test runs
the staging layer (--tags weights) for real and leaves the lab staged as it found it."""

from __future__ import annotations

import re

import pytest

from test_weights_staging import HF_HOME, REPO, SERVER, snapshot_files, stage

pytestmark = pytest.mark.grouped("weights")

WEIGHTS = f"{HF_HOME}/inferops-weights"
BIG = "inferops-lab/big-shard"
BIG_REPO = f"{HF_HOME}/hub/models--inferops-lab--big-shard"
BIG_COMMIT = "b16" + "0" * 37
BIG_SHARD = 2 * 1024 ** 3  # hashing it takes seconds on one core: longer than the idle time the old server allowed

# A process holding a staging lock (what an interrupted run's async job is), optionally listening on the port.
HOLDER = """
import fcntl, os, socket, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.lockf(fd, fcntl.LOCK_EX)
if len(sys.argv) > 2:
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as a server does: the last copy's TIME_WAIT
    listener.bind((sys.argv[2], 29510))
    listener.listen()
print(os.getpid(), flush=True)
time.sleep(600)
"""


def start_holder(lab, host, module, lock, address=""):
    """A detached process on host holding `lock` (and the port on `address`), run as Ansible's async job runs a
    module (python3 .../AnsiballZ_<module>.py, root's); returns its pid."""
    lab.node(host, "sh", "-c", f"mkdir -p {WEIGHTS} /tmp/holder && cat > /tmp/holder/AnsiballZ_{module}.py",
             stdin=HOLDER)
    pid = lab.node(host, "sh", "-c", f"setsid python3 /tmp/holder/AnsiballZ_{module}.py {lock} {address} "
                                     "> /tmp/holder.out 2>&1 & "
                                     "for i in $(seq 50); do [ -s /tmp/holder.out ] && break; sleep 0.1; done; "
                                     "cat /tmp/holder.out").stdout.strip()
    assert pid.isdigit(), pid
    return pid


def alive(lab, host, pid):
    return lab.node(host, "test", "-d", f"/proc/{pid}", check=False).returncode == 0


def lacks_one_file(lab):
    commit = lab.node("spark-2", "cat", f"{REPO}/refs/main").stdout.strip()
    lab.node("spark-2", "rm", "-f", f"{REPO}/snapshots/{commit}/config.json")


def test_an_interrupted_runs_server_and_copy_are_ended_by_the_next_run(lab, tmp_path):
    """Before #31 a Ctrl-C during "Wait for the copies" left the server and the copy running detached: the next run
    found the port taken and started a second writer on the same .part. Here both leftovers hold their locks (the
    server also the port); the next run's preflight leaves the port to the collection's own server (naming it), its
    staging ends the server as it starts its own and its copy ends the copy, and it stages."""
    assert stage(lab, tmp_path)[0] == 0
    lacks_one_file(lab)
    server = start_holder(lab, "spark-1", "model_serve", f"{WEIGHTS}/server.lock", SERVER.split(":", maxsplit=1)[0])
    copy = start_holder(lab, "spark-2", "model_fetch", f"{WEIGHTS}/models--inferops-lab--tiny-llama.lock")
    try:
        result = lab.playbook(tmp_path, "--tags", "preflight,weights")
        output = " ".join((result.stdout + result.stderr).split())
        assert result.returncode == 0, output[-3000:]
        # (Ansible quotes the note in YAML: its apostrophes come doubled)
        assert re.search(rf"NOTE spark-1: vllm_cluster_weights_port=29510 is held by the collection'?'s staging server "
                         rf"\(pid {server}\)", output), output[-3000:]
        assert not alive(lab, "spark-1", server) and not alive(lab, "spark-2", copy)
        assert re.search(r"spark-2: copied 1 of 6 files", output), output[-3000:]
        assert snapshot_files(lab, "spark-2") == snapshot_files(lab, "spark-1")
        assert lab.node("spark-1", "ss", "-Hltn", "sport = :29510").stdout.strip() == ""
    finally:
        for host, pid in (("spark-1", server), ("spark-2", copy)):
            lab.node(host, "kill", "-9", pid, check=False)
            lab.node(host, "rm", "-rf", "/tmp/holder", "/tmp/holder.out")


def test_a_process_on_the_port_is_refused_by_preflight_and_never_copied_from(lab, tmp_path):
    """A user's `python3 -m http.server 29510` on the head: before #31 preflight passed, the play's wait took it for
    the staging server and the workers asked it for the weights."""
    assert stage(lab, tmp_path)[0] == 0
    lacks_one_file(lab)
    lab.node("spark-1", "sh", "-c", "cd /tmp && setsid python3 -m http.server 29510 > /dev/null 2>&1 & "
                                    "for i in $(seq 50); do ss -Hltn 'sport = :29510' | grep -q . && break; "
                                    "sleep 0.1; done")
    try:
        result = lab.playbook(tmp_path, "--tags", "preflight")
        output = " ".join((result.stdout + result.stderr).split())
        assert result.returncode != 0 and "spark-1: vllm_cluster_weights_port=29510 already in use" in output, \
            output[-3000:]
        rc, output = stage(lab, tmp_path)
        assert rc != 0
        assert ("[F17] spark-1: the staging server could not listen on 198.18.1.12:29510: Address already in use. Nothing was "
                "copied. Fix: free port 29510 there") in output, output[-3000:]
        assert "Copy what each worker lacks" not in output
    finally:
        lab.node("spark-1", "sh", "-c", "kill $(ss -Hltnp 'sport = :29510' | grep -o 'pid=[0-9]*' | cut -d= -f2)",
                 check=False)
    assert stage(lab, tmp_path)[0] == 0


def test_a_file_changed_in_place_passes_the_fast_path_and_full_verification_finds_it(lab, tmp_path):
    """#31 item 6: the fast path trusts size and mtime (documented); model_stage_verify=full re-hashes."""
    assert stage(lab, tmp_path)[0] == 0
    commit, head_files = snapshot_files(lab, "spark-1")
    shard = f"{REPO}/snapshots/{commit}/model.safetensors"
    lab.node("spark-2", "sh", "-c", f"t=$(stat -c %y {shard}) && printf XXXX | dd of={shard} bs=1 seek=100 "
                                    f"conv=notrunc 2>/dev/null && touch -d \"$t\" {shard}")
    assert snapshot_files(lab, "spark-2")[1]["model.safetensors"] != head_files["model.safetensors"]
    rc, output = stage(lab, tmp_path)
    assert rc == 0 and re.search(r"spark-2: holds all 6 files .*: nothing to copy", output), output[-3000:]
    rc, output = stage(lab, tmp_path, "-e", "model_stage_verify=full")
    assert rc == 0, output[-3000:]
    assert re.search(r"spark-2: lacks 1 of 6 files", output) and re.search(r"spark-2: copied 1 of 6 files", output), \
        output[-3000:]
    assert snapshot_files(lab, "spark-2") == snapshot_files(lab, "spark-1")


@pytest.fixture()
def big_model(lab):
    """A model on spark-1 with one 2 GiB shard (sorted first) and a small file after it; removed afterwards."""
    lab.node("spark-1", "sh", "-c", f"""set -e
        mkdir -p {BIG_REPO}/blobs {BIG_REPO}/refs {BIG_REPO}/snapshots/{BIG_COMMIT}
        head -c {BIG_SHARD} /dev/zero > {BIG_REPO}/blobs/shard
        printf '{{}}' > {BIG_REPO}/blobs/config
        ln -s ../../blobs/shard {BIG_REPO}/snapshots/{BIG_COMMIT}/a-shard.safetensors
        ln -s ../../blobs/config {BIG_REPO}/snapshots/{BIG_COMMIT}/config.json
        printf {BIG_COMMIT} > {BIG_REPO}/refs/main""")
    yield
    for host in ("spark-1", "spark-2"):
        lab.node(host, "sh", "-c", f"rm -rf {BIG_REPO} {WEIGHTS}/models--inferops-lab--big-shard*")


def resident_pages(lab, host, path):
    """How much of a file is in the page cache (fincore), in bytes."""
    return int(lab.node(host, "fincore", "--bytes", "--noheadings", "--output", "RES", path).stdout.split()[0])


def test_a_multi_gb_shard_is_staged_and_leaves_no_page_cache_behind(lab, tmp_path, big_model):
    """#31 items 7 and 8. Before: the worker re-read each file to hash it after the download, and the server exited
    `model_stage_server_idle` seconds after the last request, so with a shard that takes longer to hash than that the
    next request found no server; and every staged byte stayed in the page cache (on unified memory, the memory
    vLLM asks for: F18). Here the idle time is 1 s and the shard takes seconds to hash."""
    rc, output = stage(lab, tmp_path, "-e", f"vllm_server_model={BIG}", "-e", "model_stage_server_idle=1")
    assert rc == 0, output[-3000:]
    assert re.search(r"spark-2: copied 2 of 2 files of inferops-lab/big-shard \w+ \(2\.1 GB in", output), output[-3000:]
    shard = f"{BIG_REPO}/snapshots/{BIG_COMMIT}/a-shard.safetensors"
    # hashed and served on the head, written and hashed on the worker: none of it kept in the page cache
    assert resident_pages(lab, "spark-1", f"{BIG_REPO}/blobs/shard") < 64 * 1024 ** 2
    assert resident_pages(lab, "spark-2", shard) < 64 * 1024 ** 2
    assert lab.node("spark-2", "sh", "-c", f"cmp -n {BIG_SHARD} {shard} /dev/zero && stat -c %s {shard}").stdout.strip() \
        == str(BIG_SHARD)
    assert lab.node("spark-1", "ss", "-Hltn", "sport = :29510").stdout.strip() == ""


def test_an_interrupted_download_on_the_head_is_not_staged_as_a_whole_snapshot(lab, tmp_path):
    """huggingface_hub writes refs/<revision> before the files: before #31 the next run took the half-downloaded
    snapshot for the model, copied it to every worker, and vLLM failed on the missing shards. The download now leaves
    a marker until it finishes; here the marker of an interrupted download is on spark-1, and downloads are off."""
    marker = f"{WEIGHTS}/models--inferops-lab--tiny-llama.downloading"
    lab.node("spark-1", "sh", "-c", f"echo main > {marker}")
    try:
        rc, output = stage(lab, tmp_path, "-e", "model_stage_download=false")
        assert rc != 0
        assert (f"[F17] spark-1: the download of inferops-lab/tiny-llama into {REPO} did not finish ({marker} is still "
                "there)") in output, output[-3000:]
        assert "Copy what each worker lacks" not in output
    finally:
        lab.node("spark-1", "rm", "-f", marker)
    assert stage(lab, tmp_path)[0] == 0


# Only spark-1's download container and an absent model: beside the weights group, with the runtime image's.
@pytest.mark.grouped("runtime-image")
def test_a_download_container_left_behind_is_ended_by_the_next_download(lab, tmp_path):
    """#31 item 10: an interrupted or timed-out download left its container running under the same name, and the
    next run failed on the name conflict. Here the model is absent and the lab has no hub: the download fails, but
    on the hub, not on the leftover."""
    name = "vllm-cluster-weights-download"
    lab.node("spark-1", "docker", "run", "-d", "--name", name, "--label", "inferops.vllm_cluster.cluster=vllm-cluster",
             "--entrypoint", "sleep", lab.node("spark-1", "docker", "inspect", "--format", "{{.Config.Image}}",
                                               "vllm-cluster-ray-head").stdout.strip(), "600")
    try:
        rc, output = stage(lab, tmp_path, "-e", "vllm_server_model=inferops-lab/absent", "-e", "model_stage_timeout=120")
        assert rc != 0
        assert "is already in use" not in output and "Conflict" not in output, output[-3000:]
        assert "Download the model into the head's hub cache" in output, output[-3000:]
        assert lab.node("spark-1", "docker", "ps", "-aq", "--filter", f"name=^{name}$").stdout.strip() == ""
    finally:
        lab.node("spark-1", "docker", "rm", "-f", name, check=False)
        lab.node("spark-1", "rm", "-rf", f"{HF_HOME}/hub/models--inferops-lab--absent")
