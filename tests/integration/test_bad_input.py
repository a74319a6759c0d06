"""Broken inventories beyond the wiring checks of test_preflight.py: each fails before any container
is created or changed, with the message the operator needs."""

from __future__ import annotations

import copy
import json
import time
import urllib.request

import pytest

from conftest import HEAD_URL, task_outcome


@pytest.mark.readonly
def test_parallelism_above_the_inventorys_gpus(lab, tmp_path, unchanged):
    lab.expect_failure(tmp_path, ["[F9] cluster: vllm_server_tensor_parallel_size 4 x vllm_server_pipeline_parallel_size 1 = 4",
                                  "the inventory has 2 nodes x 1 GPUs = 2"], "-e", "vllm_server_tensor_parallel_size=4")


@pytest.mark.readonly
def test_settings_of_the_wrong_kind_are_refused_in_one_task_of_the_run(lab, tmp_path, unchanged):
    """Every role's settings checked once, in the run's first play (module settings_check): each refused value and
    its role's README named, before anything changes; no role's `main` entry point checked play after play, and
    the merged spec (hundreds of lines) not printed."""
    output = lab.expect_failure(
        tmp_path,
        ["spark-1: values the collection's roles refuse:", "value of preflight_logind_remove_ipc must be one of: fail, warn, got: maybe",
         "argument 'ray_firewall_confirm_timeout' is of type str and we were unable to convert to int",
         "each role's README lists its settings (roles/preflight/README.md, roles/ray_firewall/README.md)"],
        "-e", json.dumps({"preflight_logind_remove_ipc": "maybe", "ray_firewall_confirm_timeout": "soon"}))
    # refused by the run's one check (no role's own), and without the merged spec that validate_argument_spec prints
    assert task_outcome(output, "Check the settings of every role against their argument specs", "spark-1") == "fatal"
    assert "argument_spec_data" not in output and output.count("description:") == 0, output[-3000:]


@pytest.mark.readonly
def test_empty_model(lab, tmp_path, unchanged):
    lab.expect_failure(tmp_path, ["vllm_server_model is empty: vLLM would have nothing to serve"], "-e", "vllm_server_model=")


@pytest.mark.readonly
@pytest.mark.parametrize("variable", ["vllm_server_port", "vllm_cluster_ray_port"])
def test_port_out_of_range(lab, tmp_path, unchanged, variable):
    lab.expect_failure(tmp_path, [f"{variable}=70000 is not a TCP port (1-65535)"], "-e", f"{variable}=70000")


@pytest.mark.readonly
@pytest.mark.parametrize(("override", "message"), [
    ("vllm_cluster_ray_node_manager_port=8000", "vllm_cluster_ray_node_manager_port=8000 is also given to vllm_server_port"),
    ("vllm_server_port=12000", "vllm_server_port=12000 lies inside Ray's worker port range 10002-19999"),
    ("vllm_cluster_ray_min_worker_port=20000", "vllm_cluster_ray_min_worker_port=20000 is not below vllm_cluster_ray_max_worker_port=19999"),
])
def test_ports_that_would_collide(lab, tmp_path, unchanged, override, message):
    lab.expect_failure(tmp_path, [message], "-e", override)


@pytest.mark.readonly
def test_image_archive_missing(lab, tmp_path, unchanged):
    lab.expect_failure(tmp_path, ["vllm_cluster_image_archive=/srv/lab-images/missing.tar does not exist on the node"],
                       "-e", "vllm_cluster_image_archive=/srv/lab-images/missing.tar")


@pytest.fixture()
def image_with_old_ray(lab):
    """The runtime image with Ray reporting 2.50.0 (token authentication came in 2.52), built in spark-1."""
    image = lab.node("spark-1", "docker", "inspect", "--format", "{{.Config.Image}}", "vllm-cluster-ray-head").stdout.strip()
    dockerfile = (
        f"FROM {image}\n"
        "RUN sed -i 's/^version = .*/version = \"2.50.0\"/' /opt/venv/lib/python3.11/site-packages/ray/_version.py\n"
    )
    tag = "inferops-lab/runtime:old-ray-test"
    lab.node("spark-1", "docker", "build", "-q", "-t", tag, "-", stdin=dockerfile)
    yield tag
    lab.node("spark-1", "docker", "rmi", tag)


@pytest.mark.grouped("runtime-image")
def test_token_auth_required_with_a_ray_that_lacks_it(lab, tmp_path, image_with_old_ray, unchanged):
    lab.expect_failure(tmp_path, ["vllm_cluster_ray_auth=token, but inferops-lab/runtime:old-ray-test has Ray 2.50.0",
                                  "token authentication needs Ray 2.52.0+"],
                       "--limit", "spark-1", "-e", f"vllm_cluster_image={image_with_old_ray}", "-e", "vllm_cluster_image_archive=",
                       "-e", "vllm_cluster_ray_auth=token")


@pytest.mark.readonly
@pytest.mark.parametrize(("extra", "message"), [
    ({"vllm_cluster_extra_env": {"X": "x\nRAY_ADDRESS=elsewhere:1"}},
     "vllm_cluster_extra_env: the value of X holds a line break; in an env file the rest would become a variable of its own."),
    ({"vllm_cluster_extra_env": {"NCCL_SOCKET_IFNAME": "eth0"}},
     "vllm_cluster_extra_env: NCCL_SOCKET_IFNAME is set by the collection (interconnect pinning, Ray auth, caches)"),
    ({"vllm_server_env": {"VLLM_HOST_IP": "198.18.0.180"}},
     "vllm_server_env: VLLM_HOST_IP is set by the collection (interconnect pinning, Ray auth, caches)"),
], ids=["newline", "pinned-extra", "pinned-vllm"])
def test_extra_env_that_would_override_the_pinning(lab, tmp_path, unchanged, extra, message):
    output = lab.expect_failure(tmp_path, [message], "-e", json.dumps(extra))
    assert "elsewhere" not in output  # values are never printed: they may be secrets


@pytest.mark.readonly
def test_extra_env_refused_by_a_vllm_only_run_too(lab, tmp_path, unchanged):
    """--tags vllm skips preflight: the env file's own check stops it before the file is written."""
    lab.expect_failure(tmp_path, ["vllm_server_env: the value of X holds a line break", "Nothing was written."],
                       "--tags", "vllm", "-e", json.dumps({"vllm_server_env": {"X": "1\nVLLM_HOST_IP=198.18.0.180"}}))


@pytest.mark.readonly
def test_interconnect_cidr_covering_the_management_network(lab, tmp_path, unchanged):
    lab.expect_failure(tmp_path, ["[F5] spark-1: vllm_cluster_interconnect_cidr=198.18.0.0/23 also covers its management "
                                  "address 198.18.0.180 (default route, eth0)", "(e.g. 198.18.1.0/24)"],
                       "-e", "vllm_cluster_interconnect_cidr=198.18.0.0/23")


@pytest.mark.readonly
def test_firewall_table_that_is_no_nftables_name(lab, tmp_path, unchanged):
    # the firewall's layer alone, as its other settings are refused in test_firewall.py: the check is its first task
    lab.expect_failure(tmp_path, ['ray_firewall_table="x; flush ruleset" is not an nftables table name'], "--tags",
                       "ray_firewall", "-e", json.dumps({"ray_firewall_enabled": True, "ray_firewall_table": "x; flush ruleset"}))


@pytest.mark.readonly
def test_a_host_both_head_and_worker(lab, tmp_path, unchanged):
    hosts = copy.deepcopy(lab.hosts)
    hosts["vllm_cluster"]["children"]["ray_workers"]["hosts"]["spark-1"] = dict(
        hosts["vllm_cluster"]["children"]["ray_head"]["hosts"]["spark-1"])
    lab.expect_failure(tmp_path, ["spark-1 is in both ray_head and ray_workers"], hosts=hosts)


@pytest.fixture(scope="module")
def vllm_stopped(lab):
    """vLLM stopped on spark-1 for the tests that need it so (its port free, the free-memory check that runs only
    before vLLM starts), started again once after the last of them, and waited for: one model load, not one each."""
    lab.node("spark-1", "docker", "stop", "vllm-cluster-vllm")
    yield
    lab.node("spark-1", "docker", "start", "vllm-cluster-vllm")
    deadline = time.monotonic() + 300
    while not vllm_healthy():
        assert time.monotonic() < deadline, "vLLM did not answer /health within 300 s of its restart"
        time.sleep(2)


def vllm_healthy() -> bool:
    try:
        with urllib.request.urlopen(f"{HEAD_URL}/health", timeout=5) as response:
            return response.status == 200
    except OSError:  # refused while it loads, or a timeout
        return False


@pytest.fixture()
def vllm_port_taken(lab, vllm_stopped):
    """A listener of another process on vLLM's port (only for this test)."""
    listener = lab.node("spark-1", "sh", "-c", "python3 -m http.server 8000 --bind 127.0.0.1 >/dev/null 2>&1 & echo $!").stdout.strip()
    yield
    lab.node("spark-1", "kill", listener)


@pytest.mark.restarts_layers
def test_a_port_taken_by_another_process(lab, tmp_path, vllm_port_taken):
    before = lab.containers()
    lab.expect_failure(tmp_path, ["spark-1: vllm_server_port=8000 already in use by another process"])
    assert lab.containers() == before, "a failed run must not create, change or restart any container"


@pytest.mark.restarts_layers
def test_less_free_unified_memory_than_vllm_asks_for_f18(lab, tmp_path, vllm_stopped):
    """The lab's nodes share the host's memory: 0.99 of it is never free. Every node is named, nothing starts."""
    before = lab.containers()
    lab.expect_failure(tmp_path, ["[F18] spark-1: ", "[F18] spark-2: ", "vllm_server_gpu_memory_utilization=0.99 asks for",
                                  "Fix: lower vllm_server_gpu_memory_utilization"],
                       "--tags", "vllm", "-e", "vllm_cluster_unified_memory=true", "-e", "vllm_server_gpu_memory_utilization=0.99")
    assert lab.containers() == before, "a failed run must not create, change or restart any container"
