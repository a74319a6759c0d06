"""Weights staged once (F17, role model_stage) on the running lab: spark-1 holds inferops-lab/tiny-llama in its hub
cache (lab create puts it there), spark-2 receives it over the interconnect (management is blocked between the lab
nodes), every rank runs offline. Each test runs the staging layer (--tags weights) for real."""

from __future__ import annotations

import json
import re
import subprocess
import time

import pytest

HF_HOME = "/var/lib/inferops-vllm-cluster/huggingface"
REPO = f"{HF_HOME}/hub/models--inferops-lab--tiny-llama"
SERVER = "198.18.1.12:29510"

# Changes the nodes only where the tests of its own group look: a group's tests run one after another, beside
# another group's (tests/suite/run: tests/suite/side-by-side, pytest --group NAME).
pytestmark = pytest.mark.grouped("weights")


def snapshot_files(lab, host):
    """{relative path: sha256} of the snapshot refs/main names on host, and that commit."""
    commit = lab.node(host, "cat", f"{REPO}/refs/main").stdout.strip()
    out = lab.node(host, "sh", "-c", f"cd {REPO}/snapshots/{commit} && find . -type f -o -type l | sort "
                                     "| xargs sha256sum").stdout
    return commit, {line.split()[1][2:]: line.split()[0] for line in out.splitlines()}


def mtimes(lab, host, commit):
    out = lab.node(host, "sh", "-c", f"cd {REPO}/snapshots/{commit} && stat -c '%n %Y.%X %i' $(find . -type f)").stdout
    return dict(line.split(" ", 1) for line in out.splitlines())


def recap_changed(output, host):
    return int(re.search(rf"{host} : ok=\d+ changed=(\d+)", output).group(1))


def stage(lab, tmp_path, *args):
    result = lab.playbook(tmp_path, "--tags", "weights", *args)
    return result.returncode, " ".join((result.stdout + result.stderr).split())


def test_first_copy_goes_over_the_interconnect_and_nothing_listens_on_management(lab):
    lab.node("spark-2", "rm", "-rf", REPO, f"{HF_HOME}/inferops-weights")
    run = lab.start_playbook("--tags", "weights")
    listeners = []
    deadline = time.monotonic() + 300
    while run.poll() is None and time.monotonic() < deadline:
        out = lab.node("spark-1", "ss", "-Hltn", "sport = :29510").stdout.split("\n")
        listeners += [line.split()[3] for line in out if line.strip()]
        time.sleep(0.2)
    output = " ".join(run.communicate(timeout=300)[0].split())
    assert run.returncode == 0, output[-3000:]
    # the head's staging server was seen listening, on its interconnect address only, and is gone now
    assert listeners and set(listeners) == {SERVER}, listeners
    assert lab.node("spark-1", "ss", "-Hltn", "sport = :29510").stdout.strip() == ""
    assert re.search(r"spark-2: lacks 6 of 6 files of inferops-lab/tiny-llama \w+ \(2\.4 MB to copy", output), output
    assert re.search(rf"spark-2: copied 6 of 6 files of inferops-lab/tiny-llama \w+ \(2\.4 MB in [\d.]+ s, [\d.]+ \w?B/s\) "
                     rf"from http://{SERVER}, each verified by sha256", output), output[-3000:]
    assert snapshot_files(lab, "spark-2") == snapshot_files(lab, "spark-1")
    # regular files on the worker, in the hub layout vLLM reads (refs/main -> snapshots/<commit>)
    commit = lab.node("spark-2", "cat", f"{REPO}/refs/main").stdout.strip()
    assert lab.node("spark-2", "find", f"{REPO}/snapshots/{commit}", "-type", "l").stdout == ""


def test_a_second_run_copies_nothing_and_says_so(lab, tmp_path):
    assert stage(lab, tmp_path)[0] == 0  # staged, whatever the state before
    rc, output = stage(lab, tmp_path)
    assert rc == 0, output[-3000:]
    assert re.search(r"spark-2: holds all 6 files of inferops-lab/tiny-llama \w+ \(2\.4 MB\): nothing to copy", output)
    assert "Copy what each worker lacks" not in output and "staging server" not in output, output[-3000:]
    assert recap_changed(output, "spark-1") == 0 and recap_changed(output, "spark-2") == 0, output[-2000:]


def test_one_corrupted_file_on_spark_2_is_found_and_only_it_copied_again(lab, tmp_path):
    assert stage(lab, tmp_path)[0] == 0
    commit, head_files = snapshot_files(lab, "spark-1")
    before = mtimes(lab, "spark-2", commit)
    lab.node("spark-2", "sh", "-c", f"truncate -s 1000 {REPO}/snapshots/{commit}/model.safetensors")
    lab.node("spark-2", "sh", "-c", f"printf x >> {REPO}/snapshots/{commit}/config.json")
    time.sleep(1)
    rc, output = stage(lab, tmp_path)
    assert rc == 0, output[-3000:]
    assert re.search(r"spark-2: lacks 2 of 6 files", output), output
    assert re.search(r"spark-2: copied 2 of 6 files .* each verified by sha256; 4 already matched", output), output
    assert snapshot_files(lab, "spark-2") == (commit, head_files)
    after = mtimes(lab, "spark-2", commit)
    untouched = {name for name in before if name not in ("./model.safetensors", "./config.json")}
    assert {name: after[name] for name in untouched} == {name: before[name] for name in untouched}
    assert after["./model.safetensors"] != before["./model.safetensors"]


def test_not_enough_space_is_refused_before_anything_is_copied(lab, tmp_path):
    # spark-2's cache on a 1 MB filesystem: the 2.4 MB snapshot cannot fit
    lab.node("spark-2", "mount", "-t", "tmpfs", "-o", "size=1m", "inferops-test-small", HF_HOME)
    try:
        rc, output = stage(lab, tmp_path)
        assert rc != 0
        assert f"[F17] spark-2: 2.4 MB to copy into {HF_HOME}, but its filesystem has 1.0 MB free" in output, \
            output[-3000:]
        assert "Start the head's staging server" not in output, "refused before the server started"
        assert lab.node("spark-2", "find", HF_HOME, "-type", "f").stdout == "", "nothing was copied"
    finally:
        lab.node("spark-2", "umount", HF_HOME)
    assert stage(lab, tmp_path)[0] == 0


@pytest.mark.readonly
def test_every_rank_runs_offline(lab):
    for host in ("spark-1", "spark-2"):
        names = lab.node(host, "docker", "ps", "--format", "{{.Names}}").stdout.split()
        assert names, f"nothing runs on {host}"
        for name in names:
            env = lab.node(host, "docker", "inspect", "--format", "{{json .Config.Env}}", name).stdout
            assert '"HF_HUB_OFFLINE=1"' in env, f"{host} {name}: {env}"
        # vLLM's ranks are Ray actors: read their own process environment
        ranks = lab.node(host, "docker", "exec", "vllm-cluster-ray-" + ("head" if host == "spark-1" else "worker"),
                         "sh", "-c", "for p in /proc/[0-9]*; do case \"$(tr '\\0' ' ' < $p/cmdline)\" in "
                         "ray::RayWorker*) echo \"$(tr '\\0' '\\n' < $p/environ | grep '^HF_HUB_OFFLINE=')\";; esac; done")
        assert ranks.stdout.split() == ["HF_HUB_OFFLINE=1"], f"{host}: {ranks.stdout!r} {ranks.stderr}"


@pytest.mark.readonly
def test_vllm_loads_the_revision_staging_pinned_on_every_node(lab):
    """#31 item 5: before, vLLM started without --revision and resolved refs/main offline, whatever was staged."""
    command = json.loads(lab.node("spark-1", "docker", "inspect", "--format", "{{json .Config.Cmd}}",
                                  "vllm-cluster-vllm").stdout)
    assert command[command.index("--revision") + 1] == "main", command
    assert command[command.index("--tokenizer-revision") + 1] == "main", command
    # what vLLM itself says it loaded (its engine config; "revision=None" before)
    logs = lab.node("spark-1", "docker", "logs", "vllm-cluster-vllm")
    assert "revision=main, tokenizer_revision=main" in logs.stdout + logs.stderr
    commits = {host: lab.node(host, "cat", f"{REPO}/refs/main").stdout.strip() for host in ("spark-1", "spark-2")}
    assert len(set(commits.values())) == 1 and all(len(commit) == 40 for commit in commits.values()), commits


@pytest.mark.readonly  # refused before anything is read or changed
def test_a_staged_revision_other_than_the_served_one_is_refused(lab, tmp_path):
    rc, output = stage(lab, tmp_path, "-e", "model_stage_ref=v2")
    assert rc != 0
    assert ("model_stage_ref=v2 but vllm_cluster_model_revision=main: vLLM is started with --revision main, so it "
            "would serve another revision than the one staged and verified. Nothing was staged.") in output, \
        output[-3000:]
    assert "Read the head's snapshot" not in output


@pytest.fixture(autouse=True)
def _model_on_spark_1(lab):
    """Every test starts from spark-1 holding the model (lab create put it there)."""
    assert lab.node("spark-1", "test", "-s", f"{REPO}/refs/main", check=False).returncode == 0


def test_the_heads_copy_comes_from_an_operators_directory_on_the_head(lab, tmp_path):
    """An operator's own HF_HOME on spark-1 (model_stage_source): brought into the cluster's cache, then staged."""
    commit, head_files = snapshot_files(lab, "spark-1")
    lab.node("spark-1", "sh", "-c", f"rm -rf /srv/operator-hf && mkdir -p /srv/operator-hf/hub && "
                                    f"mv {REPO} /srv/operator-hf/hub/ && rm -rf {HF_HOME}/inferops-weights")
    try:
        rc, output = stage(lab, tmp_path, "-e", "model_stage_source=/srv/operator-hf")
        assert rc == 0, output[-3000:]
        assert snapshot_files(lab, "spark-1") == (commit, head_files)
        assert snapshot_files(lab, "spark-2") == (commit, head_files)
        # a re-run finds the head's copy in place: nothing brought in, nothing copied
        rc, output = stage(lab, tmp_path, "-e", "model_stage_source=/srv/operator-hf")
        assert rc == 0 and "nothing to copy" in output and recap_changed(output, "spark-1") == 0, output[-3000:]
    finally:
        lab.node("spark-1", "sh", "-c", f"test -d {REPO}/refs || mv /srv/operator-hf/hub/models--inferops-lab--tiny-llama "
                                        f"{HF_HOME}/hub/; rm -rf /srv/operator-hf")


def test_the_heads_copy_comes_from_an_archive_on_the_controller(lab, tmp_path):
    commit, head_files = snapshot_files(lab, "spark-1")
    archive = tmp_path / "tiny-llama.tgz"
    packed = lab.node("spark-1", "tar", "-C", f"{HF_HOME}/hub", "-czf", "/tmp/tiny-llama.tgz",
                      "models--inferops-lab--tiny-llama")
    assert packed.returncode == 0
    subprocess.run(["docker", "cp", "inferops-lab-spark-1:/tmp/tiny-llama.tgz", str(archive)], check=True)
    lab.node("spark-1", "sh", "-c", f"mv {REPO} /srv/kept-tiny-llama && rm /tmp/tiny-llama.tgz")
    try:
        rc, output = stage(lab, tmp_path, "-e", f"model_stage_source={archive}", "-e", "model_stage_source_remote=false")
        assert rc == 0, output[-3000:]
        assert "Unpack the operator's archive into the head's hub cache" in output
        assert snapshot_files(lab, "spark-1") == (commit, head_files)
        # a directory on the controller is refused, naming the fix
        lab.node("spark-1", "rm", "-rf", REPO)
        rc, output = stage(lab, tmp_path, "-e", f"model_stage_source={tmp_path}", "-e", "model_stage_source_remote=false")
        assert rc != 0 and "is on the controller (model_stage_source_remote=false) but is not an archive" in output
    finally:
        lab.node("spark-1", "sh", "-c", f"rm -rf {REPO} && mv /srv/kept-tiny-llama {REPO}")


def test_no_container_can_write_the_hub_cache_staging_owns(lab):
    """Staged, the cache is mounted read-only: a process in any container can neither point a ref elsewhere nor plant
    a link for staging (root) to follow (#31)."""
    for host, name in (("spark-1", "vllm-cluster-ray-head"), ("spark-1", "vllm-cluster-vllm"),
                       ("spark-2", "vllm-cluster-ray-worker")):
        wrote = lab.node(host, "docker", "exec", name, "sh", "-c",
                         "echo /etc/inferops-vllm-cluster > /root/.cache/huggingface/hub/models--inferops-lab--tiny-llama"
                         "/refs/planted", check=False)
        planted = lab.node(host, "test", "-e", f"{REPO}/refs/planted", check=False).returncode == 0
        lab.node(host, "rm", "-f", f"{REPO}/refs/planted")
        assert wrote.returncode != 0 and "Read-only file system" in wrote.stderr and not planted, (host, name, wrote)


def test_a_ref_that_names_a_path_is_refused_and_nothing_reaches_the_worker(lab, tmp_path):
    """What one line written into refs/main did before #31: the head's server published /etc/inferops-vllm-cluster
    (API key, env files) on the interconnect and spark-2 wrote it into the same path as root."""
    commit = lab.node("spark-1", "cat", f"{REPO}/refs/main").stdout.strip()
    # the files staging would have written there: spark-1's (image-ray-version.json and the firewall's rules are
    # the runtime-image group's, which runs beside this one and rewrites them: CI-equivalent run 9)
    names = [name for name in lab.node("spark-1", "ls", "/etc/inferops-vllm-cluster").stdout.split()
             if name != "image-ray-version.json" and not name.startswith("ray-firewall")]
    listing = ["sh", "-c", "cd /etc/inferops-vllm-cluster && ls -ld --time-style=+%s -- " + " ".join(names) + " 2>&1"]
    before = lab.node("spark-2", *listing, check=False).stdout
    lab.node("spark-1", "sh", "-c", f"echo /etc/inferops-vllm-cluster > {REPO}/refs/main")
    try:
        rc, output = stage(lab, tmp_path)
        assert rc != 0, output[-3000:]
        assert f"[F17] spark-1: {REPO}/refs/main holds '/etc/inferops-vllm-cluster', not a commit (40 hex digits)" in output
        assert lab.node("spark-2", *listing, check=False).stdout == before
        assert lab.node("spark-1", "ss", "-Hltn", "sport = :29510").stdout.strip() == ""
    finally:
        lab.node("spark-1", "sh", "-c", f"printf %s {commit} > {REPO}/refs/main")
    assert stage(lab, tmp_path)[0] == 0


def test_a_snapshot_entry_linking_outside_the_models_blobs_is_refused(lab, tmp_path):
    """A link planted in the head's snapshot to a root-only file: before #31 its content was hashed, served and
    written world-readable into every worker's cache."""
    commit = lab.node("spark-1", "cat", f"{REPO}/refs/main").stdout.strip()
    planted = f"{REPO}/snapshots/{commit}/leak.json"
    lab.node("spark-1", "ln", "-s", "/etc/inferops-vllm-cluster/vllm_api_key", planted)
    try:
        rc, output = stage(lab, tmp_path)
        assert rc != 0, output[-3000:]
        assert (f"[F17] spark-1: {planted} in the snapshot points to /etc/inferops-vllm-cluster/vllm_api_key, outside "
                f"{REPO}/blobs") in output, output[-3000:]
        assert lab.node("spark-2", "test", "-e", f"{REPO}/snapshots/{commit}/leak.json", check=False).returncode != 0
        key = lab.node("spark-1", "cat", "/etc/inferops-vllm-cluster/vllm_api_key").stdout.strip()
        assert key and key not in output
    finally:
        lab.node("spark-1", "rm", "-f", planted)
    assert stage(lab, tmp_path)[0] == 0
