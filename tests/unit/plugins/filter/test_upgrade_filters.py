"""The filters the version plays judge with (F29, F30): what they refuse before anything changes, and the benchmark's
output read back from a container's text."""

from __future__ import annotations

import json

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm_cluster.plugins.filter.bench_command import bench_command
from ansible_collections.inferops.vllm_cluster.plugins.filter.bench_result import bench_result
from ansible_collections.inferops.vllm_cluster.plugins.filter.deployed_record import deployed_record
from ansible_collections.inferops.vllm_cluster.plugins.filter.image_repointed import image_repointed
from ansible_collections.inferops.vllm_cluster.plugins.filter.upgrade_plan import upgrade_plan
from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _bench, _upgrade

ID = "sha256:" + "ca" * 32
IMAGES = {"spark-1": {"image_id": ID, "vllm_version": "0.32.0", "ray_version": "2.60.0"},
          "spark-2": {"image_id": ID, "vllm_version": "0.32.0", "ray_version": "2.60.0"}}


def values(**changes):
    version = {name: "" for name in _upgrade.VERSION_VARIABLES}
    version.update(vllm_cluster_image="lab/runtime:1", vllm_server_model="org/model", vllm_cluster_model_revision="main")
    version.update(changes)
    return {"spark-1": version, "spark-2": dict(version)}


def test_a_record_is_built_or_the_reason_it_is_not_is_given():
    built = deployed_record(values(), IMAGES, "spark-1", "vllm-cluster", "2026-12-06T00:00:00Z")
    assert built["problem"] == "" and built["record"]["image_id"] == ID
    refused = deployed_record(values(vllm_server_env={"HF_TOKEN": "x"}), IMAGES, "spark-1", "c", "d")
    assert refused["record"] == {} and "[F30] vllm_server_env holds a secret (HF_TOKEN)" in refused["problem"]


@pytest.mark.parametrize("record, limit, expected", [
    ({}, "", "[F30] no record of what the cluster runs (/r/deployed.json)"),
    ("record", "spark-1", "[F30] upgrade.yml moves the whole cluster: --limit spark-1"),
])
def test_the_plan_refuses_without_a_record_or_under_a_limit(record, limit, expected):
    if record == "record":
        record = deployed_record(values(), IMAGES, "spark-1", "c", "d")["record"]
    plan = upgrade_plan(record, values(), "spark-1", {"spark-1": ID}, "/r/deployed.json", limit)
    assert plan["problem"].startswith(expected)


def test_the_plan_of_a_recorded_cluster_names_its_change():
    record = deployed_record(values(), IMAGES, "spark-1", "c", "d")["record"]
    plan = upgrade_plan(record, values(vllm_cluster_image="lab/runtime:2"), "spark-1", {"spark-1": "", "spark-2": ""},
                        "/r/deployed.json")
    assert plan["problem"] == "" and plan["changes"][0]["to"] == "lab/runtime:2"


def test_the_re_pointed_check_takes_a_missing_record_and_empty_ids():
    assert image_repointed({}, "lab/runtime:1", {"spark-1": None}) == ""
    record = deployed_record(values(), IMAGES, "spark-1", "c", "d")["record"]
    assert image_repointed(record, "lab/runtime:1", {"spark-2": "sha256:" + "65" * 32}).startswith("[F29] spark-2")


def test_the_benchmark_result_is_read_from_the_containers_text_and_a_missing_concurrency_named():
    row = {"max_concurrency": 4, "completed": 16, "failed": 0, "total_output_tokens": 256, "duration": 1.0,
           "request_throughput": 15.0, "output_throughput": 250.0, "p50_ttft_ms": 30.0, "p90_ttft_ms": 40.0,
           "p99_ttft_ms": 45.0, "p50_tpot_ms": 14.0, "p90_tpot_ms": 18.0, "p99_tpot_ms": 18.0}
    output = "Starting\n" + _bench.RESULT_MARK + json.dumps(row) + "\nConnection refused\n"
    result = bench_result(output, "1,4", "spark-1", 1)
    assert [found["max_concurrency"] for found in result["rows"]] == [4]
    assert len(result["problems"]) == 1 and "no result for concurrency 1" in result["problems"][0]


def test_a_bad_benchmark_setting_stops_the_play_with_its_name():
    with pytest.raises(AnsibleFilterError, match="input_len"):
        bench_command({"concurrencies": [1], "input_len": 0, "output_len": 1, "prompts_per_concurrency": 1,
                       "key_file": "", "url": "http://x", "model": "m", "served_model_name": "m"})


def test_a_lock_held_is_named_with_its_age_and_the_way_out(tmp_path):
    from ansible_collections.inferops.vllm_cluster.plugins.filter.upgrade_locked import upgrade_locked
    lock = tmp_path / "running"
    lock.mkdir()
    message = upgrade_locked(str(lock))
    assert message.startswith(f"[F30] another upgrade of this cluster runs, or one was interrupted ({lock} exists since ")
    assert f"if none runs, remove {lock}" in message


def test_a_running_version_without_a_benchmark_stops_the_upgrade_before_anything_changes():
    from ansible_collections.inferops.vllm_cluster.plugins.filter.upgrade_premeasure_problem import (
        upgrade_premeasure_problem)
    assert upgrade_premeasure_problem([], "spark-1") == ""
    assert upgrade_premeasure_problem(["[F30] spark-1: no result"], "spark-1").startswith(
        "[F30] spark-1: the running version gives no benchmark to judge the new one against: [F30] spark-1: no result")


def test_the_disk_filter_reads_dfs_output_and_stops_on_what_it_cannot_read():
    from ansible_collections.inferops.vllm_cluster.plugins.filter.upgrade_disk_problem import upgrade_disk_problem
    df = "Filesystem 1-blocks Used Available Capacity Mounted on\n/dev/x 100 1 %d 1%% /\n"
    assert upgrade_disk_problem(df % (40 * 2**30), "spark-1", "/var/lib/docker", 30) == ""
    assert upgrade_disk_problem(df % (12 * 2**30), "spark-2", "/var/lib/docker", 30).startswith("[F30] spark-2: 12.0 GiB")
    with pytest.raises(AnsibleFilterError, match="spark-2: df gave no free space"):
        upgrade_disk_problem("", "spark-2", "/var/lib/docker", 30)
