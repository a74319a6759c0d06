"""Versions on the lab's real nodes (#36, F29, F30): a re-pointed tag stopped before anything changes, and
playbooks/upgrade.yml to lab releases built on the nodes FROM the lab's runtime image: one that serves as well (accepted,
recorded, a second run changes nothing), one whose vLLM exits at start and one slower per token (each rolled back to
the version before, which answers again). The lab image's plugin carries the faults, switched on by each release's
environment (lab/README.md)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import pathlib
import subprocess
import tarfile

import pytest
import yaml
from conftest import LAB_INVENTORY, flat

pytestmark = pytest.mark.restarts_layers

RECORDS = pathlib.Path(os.environ.get("INFEROPS_CACHE_DIR") or pathlib.Path.home() / ".cache/inferops-vllm-cluster") \
    / "lab-records"
DEPLOYED = RECORDS / "deployed.json"
BASELINE = RECORDS / "bench-baseline.json"
LAB_IMAGE = yaml.safe_load((LAB_INVENTORY / "group_vars/all/images.yml").read_text())["vllm_cluster_image"]
# name -> what the release's image adds to the lab's environment (10 ms in each all-reduce: some 3x the time per token)
RELEASES = {
    "next": [],
    "broken": ["INFEROPS_LAB_EXIT_AT_START=1"],
    "slow": ["INFEROPS_LAB_ALL_REDUCE_DELAY_MS=10"],
}


def release(name: str) -> str:
    return f"inferops-lab/runtime:upgrade-test-{name}"


def image_id(lab, host: str, image: str) -> str:
    return lab.node(host, "docker", "image", "inspect", "--format", "{{.Id}}", image).stdout.strip()


def serving_image(lab) -> str:
    return lab.node("spark-1", "docker", "inspect", "--format", "{{.Image}}", "vllm-cluster-vllm").stdout.strip()


def upgrade(lab, tmp_path, *args: str):
    result = lab.playbook(tmp_path, *args, playbook="playbooks/upgrade.yml")
    return result, flat(result.stdout + result.stderr)


def to(name: str) -> tuple[str, ...]:
    return ("-e", f"vllm_cluster_image={release(name)}", "-e", "vllm_cluster_image_archive=")


def release_archive(base_config: bytes, name: str, env: list[str]) -> bytes:
    """A `docker save` archive of a release: the lab image's own configuration with `env` added, no layer of its own.
    docker load takes the layers from the engine, which holds them: the archive is a few kB, and every node that
    loads it holds the same image ID, as a registry would give them."""
    config = json.loads(base_config)
    config["config"]["Env"] = config["config"]["Env"] + env
    config["config"]["Labels"] = dict(config["config"].get("Labels") or {}, **{"inferops.test.release": name})
    config["created"] = "2026-01-01T00:00:00Z"
    config["history"] = config["history"] + [{"created": config["created"], "created_by": f"upgrade test: {env}",
                                              "empty_layer": True}]
    body = json.dumps(config).encode()
    digest = hashlib.sha256(body).hexdigest()
    layers = [f"{index}/layer.tar" for index in range(len(config["rootfs"]["diff_ids"]))]
    manifest = json.dumps([{"Config": f"{digest}.json", "RepoTags": [release(name)], "Layers": layers}]).encode()
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        for member, data in (("manifest.json", manifest), (f"{digest}.json", body)):
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return archive.getvalue()


@pytest.fixture(scope="module")
def releases(lab):
    """Each release loaded on both nodes (seconds); afterwards the lab's own image deployed again where another
    runs, and the releases removed."""
    lab_id = image_id(lab, "spark-1", LAB_IMAGE)
    base = subprocess.run(["docker", "exec", "inferops-lab-spark-1", "cat",
                           f"/var/lib/docker/image/overlay2/imagedb/content/sha256/{lab_id[7:]}"],
                          check=True, capture_output=True).stdout
    for name, env in RELEASES.items():
        archive = release_archive(base, name, env)
        for host in ("spark-1", "spark-2"):
            subprocess.run(["docker", "exec", "-i", f"inferops-lab-{host}", "docker", "load"], input=archive,
                           check=True, capture_output=True)
    yield
    if json.loads(DEPLOYED.read_text())["image"] != LAB_IMAGE or serving_image(lab) != lab_id:
        result = lab.playbook(pathlib.Path("/tmp"))
        assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    for host in ("spark-1", "spark-2"):
        lab.node(host, "docker", "rmi", *(release(name) for name in RELEASES), check=False)


def test_bench_yml_measures_the_cluster_beside_its_baseline_and_changes_nothing(lab, tmp_path, unchanged):
    # A cluster's first benchmark has nothing to stand beside and becomes the baseline. (Made here: a baseline left
    # in the lab's records by an earlier run of the suite on this machine is not one a clean machine has.)
    BASELINE.unlink(missing_ok=True)
    first = lab.playbook(tmp_path, playbook="playbooks/bench.yml")
    output = flat(first.stdout + first.stderr)
    assert first.returncode == 0, output[-3000:]
    assert f"benchmark of tiny-llama on {LAB_IMAGE}" in output and "baseline: " not in output
    assert json.loads(BASELINE.read_text()) == json.loads((RECORDS / "bench.json").read_text())

    # the next stands beside it, and, asked to, becomes the baseline itself
    result = lab.playbook(tmp_path, "-e", "bench_baseline=true", playbook="playbooks/bench.yml")
    output = flat(result.stdout + result.stderr)
    assert result.returncode == 0, output[-3000:]
    assert f"benchmark of tiny-llama on {LAB_IMAGE}" in output
    assert "baseline: " in output, output[-3000:]
    run = json.loads((RECORDS / "bench.json").read_text())
    assert run == json.loads(BASELINE.read_text())
    assert [row["max_concurrency"] for row in run["rows"]] == [4] and run["rows"][0]["failed"] == 0
    assert run["rows"][0]["output_throughput"] > 0 and run["version_info"]["image"] == LAB_IMAGE


def test_a_tag_pushed_again_is_named_before_any_container_changes(lab, tmp_path, releases, unchanged):
    recorded = json.loads(DEPLOYED.read_text())
    assert recorded["image"] == LAB_IMAGE, recorded
    try:
        lab.node("spark-2", "docker", "tag", release("next"), LAB_IMAGE)
        output = flat(lab.expect_failure(tmp_path, ["[F29] spark-2:"]))
        assert f"{LAB_IMAGE} now names image {image_id(lab, 'spark-2', release('next'))[7:19]}, not the " \
               f"{recorded['image_id'][7:19]}" in output
        assert "[F29] spark-1" not in output
    finally:
        lab.node("spark-2", "docker", "tag", recorded["image_id"], LAB_IMAGE)


def test_an_upgrade_that_passes_is_accepted_recorded_and_a_second_run_changes_nothing(lab, tmp_path, releases):
    """A version variable that restarts no container (the oldest vLLM the model needs): the same path as a new image
    (plan, site.yml, prompts, benchmark, record) without the suite's time for two more Ray restarts. A new image's
    acceptance: the way forward of the two rollback tests below, and by hand (docs/benchmarks.md)."""
    before = json.loads(DEPLOYED.read_text())
    recorded = before["values"]["vllm_cluster_vllm_min_version"]
    wanted = "0.1.1" if recorded == "0.1.0" else "0.1.0"
    change = ("-e", f"vllm_cluster_vllm_min_version={wanted}")
    result, output = upgrade(lab, tmp_path, *change)
    assert result.returncode == 0, output[-4000:]
    assert f'{{"name": "vllm_cluster_vllm_min_version", "from": "{recorded}", "to": "{wanted}"}}' in output
    assert f"upgraded from {before['image']}" in output
    after = json.loads(DEPLOYED.read_text())
    assert after["values"]["vllm_cluster_vllm_min_version"] == wanted
    assert (after["image"], after["image_id"]) == (before["image"], before["image_id"])
    assert after["settings_hash"] != before["settings_hash"]
    baseline = json.loads(BASELINE.read_text())
    assert baseline["version_info"]["settings_hash"] == after["settings_hash"]
    assert serving_image(lab) == before["image_id"]

    again, output = upgrade(lab, tmp_path, *change)
    assert again.returncode == 0, output[-3000:]
    assert f"nothing to upgrade: the cluster runs {before['image']}" in output
    assert "changed=0" in output and "changed=1" not in output


def _rolled_back(lab, output: str, before: dict, bad: str) -> None:
    assert f"rolled back to {before['image']} ({before['image_id'][7:19]})" in output, output[-4000:]
    assert "it answers 4 of 4 fixed prompts again" in output
    assert json.loads(DEPLOYED.read_text()) == before
    assert serving_image(lab) == before["image_id"]
    for host in ("spark-1", "spark-2"):
        left = lab.node(host, "docker", "ps", "-aq", "--filter", f"ancestor={release(bad)}").stdout.split()
        assert left == [], f"{host} still has containers of {release(bad)}: {left}"


@pytest.mark.rollbacks
def test_an_upgrade_whose_vllm_exits_at_start_is_rolled_back(lab, tmp_path, releases):
    before = json.loads(DEPLOYED.read_text())
    result, output = upgrade(lab, tmp_path, *to("broken"))
    assert result.returncode != 0, output[-3000:]
    assert f"[F30] the upgrade to {release('broken')}" in output and "failed while deploying it" in output
    assert "forward.log" in output and "back.log" in output
    _rolled_back(lab, output, before, "broken")


@pytest.mark.rollbacks
def test_an_upgrade_slower_than_the_tolerance_is_rolled_back_on_the_benchmark(lab, tmp_path, releases):
    before = json.loads(DEPLOYED.read_text())
    result, output = upgrade(lab, tmp_path, *to("slow"))
    assert result.returncode != 0, output[-3000:]
    assert f"[F30] the upgrade to {release('slow')}" in output and "deployed but was not accepted" in output
    assert "output throughput fell by more than vllm_cluster_upgrade_max_slowdown=50%" in output
    # the figures side by side: each concurrency, then the baseline's
    assert f"benchmark of tiny-llama on {release('slow')}" in output and "baseline: " in output
    _rolled_back(lab, output, before, "slow")
