from __future__ import annotations

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ray_checks import (
    gcs_unreachable,
    MESSAGES,
    check_dry_run,
    check_nodes,
    node_table,
    parse_nodes,
    resolve_host,
)

CIDR = "192.168.200.0/24"
EXPECTED = {"spark-1": "192.168.200.12", "spark-2": "192.168.200.13"}


def raw(address, hostname, alive=True, head=False, gpus=1.0, node_id=None, node_resource=None):
    resources = {"CPU": 20.0, "GPU": gpus, f"node:{node_resource or address}": 1.0}
    if head:
        resources["node:__internal_head__"] = 1.0
    return {
        "NodeID": node_id or f"{hostname}-{address}".ljust(56, "0"),
        "Alive": alive,
        "NodeManagerAddress": address,
        "NodeManagerHostname": hostname,
        "Resources": resources,
    }


HEALTHY = [raw("192.168.200.12", "spark-1", head=True), raw("192.168.200.13", "spark-2")]


def checks(raw_nodes, **kwargs):
    nodes = parse_nodes(raw_nodes, kwargs.pop("expected", EXPECTED))
    return check_nodes(nodes, CIDR, kwargs.pop("expected_ips", EXPECTED), timeout=60, **kwargs)


def test_healthy_cluster_has_no_violation():
    assert checks(HEALTHY, expected_gpus=2, tensor_parallel_size=2) == []


def test_f1_head_on_management_address_names_host_address_cidr_and_fix():
    violations = checks([raw("10.1.230.180", "spark-1", head=True), raw("192.168.200.13", "spark-2")])
    assert [(v.check, v.host, v.address) for v in violations] == [("F1", "spark-1", "10.1.230.180")]
    message = violations[0].message
    for needle in ("spark-1", "10.1.230.180", CIDR, "--node-ip-address=192.168.200.12", "troubleshooting.md#f1"):
        assert needle in message


def test_f4_worker_on_its_management_address_is_named():
    violations = checks([raw("192.168.200.12", "spark-1", head=True), raw("10.1.230.181", "spark-2")])
    assert [(v.check, v.host) for v in violations] == [("F4", "spark-2")]
    assert "--node-ip-address=192.168.200.13" in violations[0].message


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.1.1"])
def test_loopback_registration_counts_as_outside(address):
    violations = checks([raw(address, "spark-1", head=True), raw("192.168.200.13", "spark-2")])
    assert [(v.check, v.address) for v in violations] == [("F1", address)]


def test_f2_node_registered_inside_cidr_but_not_its_vllm_host_ip():
    expected = {"spark-1": "192.168.200.12", "spark-2": "192.168.200.13"}
    # spark-2 registered .23 (a second interconnect address) while its VLLM_HOST_IP is .13
    nodes = [raw("192.168.200.12", "spark-1", head=True), raw("192.168.200.23", "spark-2")]
    violations = checks(nodes, expected=expected, expected_ips=expected)
    assert ("F2", "spark-2", "192.168.200.23") in [(v.check, v.host, v.address) for v in violations]
    message = next(v.message for v in violations if v.check == "F2")
    assert "node:192.168.200.13" in message and "No available node types" in message


def test_f2_node_resource_differs_from_the_registered_address():
    nodes = [raw("192.168.200.12", "spark-1", head=True, node_resource="192.168.200.99"), raw("192.168.200.13", "spark-2")]
    violations = checks(nodes, expected={}, expected_ips={})
    assert [(v.check, v.address) for v in violations] == [("F2", "192.168.200.12")]


def test_f14_missing_host_is_named_with_its_address():
    violations = checks([raw("192.168.200.12", "spark-1", head=True)])
    assert [(v.check, v.host, v.address) for v in violations] == [("F14", "spark-2", "192.168.200.13")]
    assert "1 of 2 nodes alive" in violations[0].message


def test_f14_count_without_inventory_view():
    violations = checks([raw("192.168.200.12", "spark-1", head=True)], expected={}, expected_ips={}, expected_nodes=2)
    assert [v.check for v in violations] == ["F14"]
    assert "1 of 2 expected Ray nodes alive" in violations[0].message


def test_f14_gpu_shortfall():
    violations = checks([raw("192.168.200.12", "spark-1", head=True, gpus=0), raw("192.168.200.13", "spark-2")], expected_gpus=2)
    assert [v.check for v in violations] == ["F14"]
    assert "Ray sees 1 GPUs" in violations[0].message


def test_f15_dead_node_not_replaced_is_named():
    nodes = HEALTHY[:1] + [raw("192.168.200.13", "spark-2", alive=False)]
    violations = checks(nodes)
    assert sorted(v.check for v in violations) == ["F14", "F15"]
    dead = next(v for v in violations if v.check == "F15")
    assert dead.host == "spark-2" and "is dead" in dead.message


def test_dead_entry_of_a_restarted_node_is_history_not_a_failure():
    nodes = HEALTHY + [raw("192.168.200.13", "spark-2", alive=False, node_id="old".ljust(56, "0"))]
    assert checks(nodes) == []


def test_f8_two_alive_nodes_at_one_address_name_the_address_and_both_ids():
    stale = raw("192.168.200.13", "spark-2", node_id="stale".ljust(56, "0"))
    violations = checks(HEALTHY + [stale], expected_gpus=2)
    assert [(v.check, v.host, v.address) for v in violations] == [("F8", "spark-2", "192.168.200.13")]
    message = violations[0].message
    assert "2 alive Ray nodes registered 192.168.200.13 after 60 s" in message
    assert "stale0000000" in message and "spark-2-192." in message
    assert "--limit spark-2" in message and "#f8" in message


def test_f9_parallelism_above_gpus():
    violations = checks(HEALTHY, tensor_parallel_size=2, pipeline_parallel_size=2)
    assert [v.check for v in violations] == ["F9"]
    assert "2 x pipeline_parallel_size 2 = 4 GPUs" in violations[0].message


def test_resolve_host_by_hostname_when_the_address_is_wrong():
    assert resolve_host("10.1.230.181", "spark-2.lab.example", EXPECTED) == "spark-2"
    assert resolve_host("10.9.9.9", "other", EXPECTED) is None


def test_unknown_node_is_labelled_by_hostname():
    violations = checks(HEALTHY + [raw("10.9.9.9", "intruder")], expected_nodes=2)
    assert [(v.check, v.host) for v in violations] == [("F4", "unknown node intruder")]


def test_dry_run_failures_explain_the_layer():
    nodes = parse_nodes(HEALTHY, EXPECTED)
    worker_id = nodes[1].node_id
    result = {
        "placement": {"status": "failed", "bundles": 2, "driver_ip": "192.168.200.12", "detail": "still pending"},
        "rendezvous": [
            {"node_id": worker_id, "address": "192.168.200.13", "driver_ip": "192.168.200.12", "port": 41000,
             "status": "connect_failed", "detail": "ConnectionRefusedError"},
        ],
    }
    violations = check_dry_run(result, nodes, "spark-1", 30)
    assert [(v.check, v.host) for v in violations] == [("F2", "spark-1"), ("F3", "spark-2")]
    assert "192.168.200.12:41000" in violations[1].message
    result["rendezvous"][0]["status"] = "transfer_timeout"
    assert check_dry_run(result, nodes, "spark-1", 30)[1].check == "F4"


def test_every_message_links_its_troubleshooting_section():
    for key, template in MESSAGES.items():
        assert "{doc}#f" in template, key
        assert template.startswith("[F"), key


def test_node_table_lists_dead_nodes_last():
    nodes = parse_nodes([raw("192.168.200.13", "spark-2", alive=False)] + HEALTHY, EXPECTED)
    lines = node_table(nodes)
    assert lines[0].startswith("spark-1") and "head" in lines[0]
    assert "DEAD" in lines[-1]


DECOMMISSIONED = raw("192.168.200.14", "spark-old", gpus=1.0)


@pytest.mark.parametrize(
    "case, unknown_nodes, kwargs, checks_found",
    [
        ("named, and its GPU not counted toward the TP=3 it would have allowed", "fail",
         {"expected_gpus": 2, "tensor_parallel_size": 3}, ["F22", "F9"]),
        ("warn: not a failure here, yet its GPU still not counted", "warn",
         {"expected_gpus": 2, "tensor_parallel_size": 3}, ["F9"]),
        ("warn, with a fitting parallelism: nothing to fail", "warn", {"expected_gpus": 2, "tensor_parallel_size": 2}, []),
    ],
)
def test_f22_an_alive_node_outside_the_inventory(case, unknown_nodes, kwargs, checks_found):
    violations = checks(HEALTHY + [DECOMMISSIONED], unknown_nodes=unknown_nodes, **kwargs)
    assert [v.check for v in violations] == checks_found, case
    if "F22" in checks_found:
        message = violations[0].message
        for text in ("[F22] 192.168.200.14", "hostname spark-old", "its 1 GPUs are not counted", "ray_workers"):
            assert text in message, case
    if "F9" in checks_found:
        assert "Ray sees 2 on alive nodes" in violations[-1].message, case


def test_gcs_unreachable_names_both_ends_the_port_and_the_fix():
    assert gcs_unreachable("spark-2", "spark-1", "198.18.1.12", 6379, "ic0", "198.18.1.13", 30, "198.18.1.0/24") == (
        "[F6] spark-2: cannot open TCP to the Ray head's GCS at 198.18.1.12:6379 (head spark-1) from its interconnect "
        "ic0 (198.18.1.13) within 30 s; `ray start` would retry forever. Fix: check the link (`ping -I ic0 "
        "198.18.1.12`), that firewalls admit TCP 6379 from 198.18.1.0/24, and that the head container runs. "
        f"See {TROUBLESHOOTING}#f6")
