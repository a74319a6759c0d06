"""Versions on the lab's real nodes (#36, F29, F30): a re-pointed tag stopped before anything changes, and
playbooks/upgrade.yml to lab releases built on the nodes FROM the lab's runtime image: one that serves as well (accepted,
recorded, a second run changes nothing), one whose vLLM exits at start and one slower per token (each rolled back to
the version before, which answers again). The lab image's plugin carries the faults, switched on by each release's
environment (lab/README.md)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess

import pytest
import yaml
from conftest import LAB_INVENTORY, flat

pytestmark = pytest.mark.restarts_layers

RECORDS = pathlib.Path(os.environ.get("INFEROPS_CACHE_DIR") or pathlib.Path.home() / ".cache/inferops-vllm-cluster") \
    / "lab-records"
DEPLOYED = RECORDS / "deployed.json"
BASELINE = RECORDS / "bench-baseline.json"
LAB_IMAGE = yaml.safe_load((LAB_INVENTORY / "group_vars/all/images.yml").read_text())["vllm_cluster_image"]
LABEL = "inferops.vllm_cluster.lab=upgrade-test"
# name -> what the release's image adds to the lab's (10 ms in each all-reduce: some 3x the time per token)
RELEASES = {
    "next": "",
    "broken": "ENV INFEROPS_LAB_EXIT_AT_START=1",
    "slow": "ENV INFEROPS_LAB_ALL_REDUCE_DELAY_MS=10",
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


@pytest.fixture(scope="module")
def releases(lab):
    """Each release built on spark-1 (layers shared with the lab's image: seconds) and copied to spark-2, so that both
    hold the same image IDs, as a registry would give them; afterwards the lab's own image deployed again where
    another runs, and the releases removed."""
    for name, line in RELEASES.items():
        dockerfile = f"FROM {LAB_IMAGE}\nLABEL {LABEL} inferops.test.release={name}\n{line}\n"
        lab.node("spark-1", "docker", "build", "-q", "-t", release(name), "-", stdin=dockerfile)
    names = " ".join(release(name) for name in RELEASES)
    subprocess.run(f"docker exec inferops-lab-spark-1 docker save {names} | docker exec -i inferops-lab-spark-2 docker load",
                   shell=True, check=True, capture_output=True)
    yield
    if json.loads(DEPLOYED.read_text())["image"] != LAB_IMAGE or serving_image(lab) != image_id(lab, "spark-1", LAB_IMAGE):
        result = lab.playbook(pathlib.Path("/tmp"))
        assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    for host in ("spark-1", "spark-2"):
        lab.node(host, "docker", "rmi", *(release(name) for name in RELEASES), check=False)


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


def test_an_upgrade_that_serves_as_well_is_accepted_recorded_and_a_second_run_changes_nothing(lab, tmp_path, releases):
    result, output = upgrade(lab, tmp_path, *to("next"))
    assert result.returncode == 0, output[-4000:]
    assert f"upgrade from {LAB_IMAGE}" in output and f"to {release('next')}" in output
    assert f"upgraded from {LAB_IMAGE}" in output
    next_id = image_id(lab, "spark-1", release("next"))
    assert serving_image(lab) == next_id
    recorded = json.loads(DEPLOYED.read_text())
    assert (recorded["image"], recorded["image_id"]) == (release("next"), next_id)
    baseline = json.loads(BASELINE.read_text())
    assert baseline["version_info"]["image"] == release("next") and baseline["version_info"]["image_id"] == next_id
    assert [row["max_concurrency"] for row in baseline["rows"]] == [1, 4]

    again, output = upgrade(lab, tmp_path, *to("next"))
    assert again.returncode == 0, output[-3000:]
    assert f"nothing to upgrade: the cluster runs {release('next')}" in output
    assert "changed=0" in output and "changed=1" not in output


def _rolled_back(lab, output: str, before: dict, bad: str) -> None:
    assert f"rolled back to {before['image']} ({before['image_id'][7:19]})" in output, output[-4000:]
    assert "it answers 4 of 4 fixed prompts again" in output
    assert json.loads(DEPLOYED.read_text()) == before
    assert serving_image(lab) == before["image_id"]
    for host in ("spark-1", "spark-2"):
        left = lab.node(host, "docker", "ps", "-aq", "--filter", f"ancestor={release(bad)}").stdout.split()
        assert left == [], f"{host} still has containers of {release(bad)}: {left}"


def test_an_upgrade_whose_vllm_exits_at_start_is_rolled_back(lab, tmp_path, releases):
    before = json.loads(DEPLOYED.read_text())
    result, output = upgrade(lab, tmp_path, *to("broken"))
    assert result.returncode != 0, output[-3000:]
    assert f"[F30] the upgrade to {release('broken')}" in output and "failed while deploying it" in output
    assert "forward.log" in output and "back.log" in output
    _rolled_back(lab, output, before, "broken")


def test_an_upgrade_slower_than_the_tolerance_is_rolled_back_on_the_benchmark(lab, tmp_path, releases):
    before = json.loads(DEPLOYED.read_text())
    result, output = upgrade(lab, tmp_path, *to("slow"))
    assert result.returncode != 0, output[-3000:]
    assert f"[F30] the upgrade to {release('slow')}" in output and "deployed but was not accepted" in output
    assert "output throughput fell by more than vllm_cluster_upgrade_max_slowdown=50%" in output
    # the figures side by side: each concurrency, then the baseline's
    assert f"benchmark of tiny-llama on {release('slow')}" in output and "baseline: " in output
    _rolled_back(lab, output, before, "slow")
