"""Every preflight failure, triggered on the real lab: the play fails with the message an operator
needs, and no container on any node was created, changed or restarted."""

from __future__ import annotations

import copy

import pytest

HEAD = ("vllm_cluster", "children", "ray_head", "hosts")
WORKERS = ("vllm_cluster", "children", "ray_workers", "hosts")


def _at(tree: dict, path: tuple) -> dict:
    for key in path:
        tree = tree[key]
    return tree


def with_host_vars(hosts: dict, host: str, **values) -> dict:
    hosts = copy.deepcopy(hosts)
    for path in (HEAD, WORKERS):
        group = _at(hosts, path)
        if host in group:
            group[host].update(values)
    return hosts


def two_heads(hosts: dict) -> dict:
    hosts = copy.deepcopy(hosts)
    worker = _at(hosts, WORKERS).pop("spark-2")
    _at(hosts, HEAD)["spark-2"] = worker
    return hosts


def no_head(hosts: dict) -> dict:
    hosts = copy.deepcopy(hosts)
    head = _at(hosts, HEAD).pop("spark-1")
    _at(hosts, WORKERS)["spark-1"] = head
    return hosts


@pytest.mark.readonly
def test_invalid_cidr(lab, tmp_path, unchanged):
    lab.expect_failure(tmp_path, ['vllm_cluster_interconnect_cidr="198.18.1.0/33" is not an IPv4 network'],
                       "-e", "vllm_cluster_interconnect_cidr=198.18.1.0/33")


@pytest.mark.readonly
def test_no_interconnect_address_f5(lab, tmp_path, unchanged):
    lab.expect_failure(tmp_path, ["[F5] spark-1: no address inside the interconnect 198.18.7.0/24", "198.18.0.180"],
                       "-e", "vllm_cluster_interconnect_cidr=198.18.7.0/24")


@pytest.mark.readonly
def test_configured_ip_outside_cidr_f5(lab, tmp_path, unchanged):
    hosts = with_host_vars(lab.hosts, "spark-2", vllm_cluster_node_ip="198.18.0.181")
    lab.expect_failure(tmp_path, ["[F5] spark-2: vllm_cluster_node_ip=198.18.0.181 lies outside the interconnect 198.18.1.0/24"],
                       hosts=hosts)


@pytest.mark.readonly
def test_configured_ip_not_on_host_f5(lab, tmp_path, unchanged):
    hosts = with_host_vars(lab.hosts, "spark-2", vllm_cluster_node_ip="198.18.1.99")
    lab.expect_failure(tmp_path, ["[F5] spark-2: vllm_cluster_node_ip=198.18.1.99 is not assigned on any interface",
                                  "interconnect addresses here: 198.18.1.13"], hosts=hosts)


@pytest.mark.readonly
def test_interface_absent_f7(lab, tmp_path, unchanged):
    hosts = with_host_vars(lab.hosts, "spark-1", vllm_cluster_interconnect_interface="enp1s0f1np1")
    lab.expect_failure(tmp_path, ['[F7] spark-1: interface "enp1s0f1np1" does not exist', "198.18.1.12 is on eth1"], hosts=hosts)


@pytest.mark.readonly
def test_interface_without_the_address_f7(lab, tmp_path, unchanged):
    hosts = with_host_vars(lab.hosts, "spark-1", vllm_cluster_interconnect_interface="eth0")
    lab.expect_failure(tmp_path, ['[F7] spark-1: interface "eth0" does not carry 198.18.1.12'], hosts=hosts)


@pytest.mark.readonly
def test_two_heads(lab, tmp_path, unchanged):
    lab.expect_failure(tmp_path, ["The ray_head group holds 2 hosts (spark-1, spark-2); expected exactly one"],
                       hosts=two_heads(lab.hosts))


@pytest.mark.readonly
def test_no_head(lab, tmp_path, unchanged):
    lab.expect_failure(tmp_path, ["The ray_head group holds 0 hosts (none); expected exactly one"], hosts=no_head(lab.hosts))


@pytest.fixture()
def shared_address(lab):
    """Both nodes hold 198.18.1.50 as a second interconnect address (only for this test)."""
    for host, interface in (("spark-1", "eth1"), ("spark-2", "ic0")):
        lab.node(host, "ip", "addr", "add", "198.18.1.50/24", "dev", interface)
    yield "198.18.1.50"
    for host, interface in (("spark-1", "eth1"), ("spark-2", "ic0")):
        lab.node(host, "ip", "addr", "del", "198.18.1.50/24", "dev", interface)


def test_duplicate_node_ips_f8(lab, tmp_path, shared_address, unchanged):
    hosts = with_host_vars(lab.hosts, "spark-1", vllm_cluster_node_ip=shared_address)
    hosts = with_host_vars(hosts, "spark-2", vllm_cluster_node_ip=shared_address)
    lab.expect_failure(tmp_path, [f"[F8] {shared_address} on spark-1 and spark-2"], hosts=hosts)


def test_duplicate_node_ips_f8_outside_the_limit(lab, tmp_path, shared_address, unchanged):
    """--limit spark-1 (the head): spark-2 is still compared, as when adding a node with --limit."""
    hosts = with_host_vars(lab.hosts, "spark-1", vllm_cluster_node_ip=shared_address)
    hosts = with_host_vars(hosts, "spark-2", vllm_cluster_node_ip=shared_address)
    lab.expect_failure(tmp_path, [f"[F8] {shared_address} on spark-1 and spark-2"], "--limit", "spark-1", hosts=hosts)


def test_two_interconnect_addresses_need_a_choice_f5(lab, tmp_path, shared_address, unchanged):
    lab.expect_failure(tmp_path, ["[F5] spark-1: 2 addresses inside the interconnect 198.18.1.0/24",
                                  f"{shared_address} on eth1", "Fix: set vllm_cluster_node_ip in host_vars/spark-1"])


@pytest.fixture()
def smaller_mtu_on_spark2(lab):
    lab.node("spark-2", "ip", "link", "set", "dev", "ic0", "mtu", "1400")
    yield
    lab.node("spark-2", "ip", "link", "set", "dev", "ic0", "mtu", "1500")


def test_mtu_mismatch_fails_when_asked_f12(lab, tmp_path, smaller_mtu_on_spark2, unchanged):
    lab.expect_failure(tmp_path, ["[F12] interconnect MTU differs between nodes", "spark-1 eth1 1500", "spark-2 ic0 1400"],
                       "-e", "vllm_cluster_mtu_mismatch=fail")


def test_mtu_mismatch_outside_the_limit_f12(lab, tmp_path, smaller_mtu_on_spark2, unchanged):
    lab.expect_failure(tmp_path, ["[F12] interconnect MTU differs between nodes", "spark-2 ic0 1400"],
                       "--limit", "spark-1", "-e", "vllm_cluster_mtu_mismatch=fail")


def test_mtu_mismatch_only_warns_by_default_f12(lab, tmp_path, smaller_mtu_on_spark2, unchanged):
    result = lab.playbook(tmp_path, "--tags", "preflight")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "WARNING [F12] interconnect MTU differs between nodes" in result.stdout


@pytest.fixture()
def gcs_blocked_from_spark2(lab):
    rule = ["OUTPUT", "-p", "tcp", "-d", "198.18.1.12", "--dport", "6379", "-j", "REJECT"]
    lab.node("spark-2", "iptables", "-w", "-I", *rule)
    yield
    lab.node("spark-2", "iptables", "-w", "-D", *rule)


def test_worker_cannot_reach_the_gcs_f6(lab, tmp_path, gcs_blocked_from_spark2, unchanged):
    lab.expect_failure(tmp_path, ["[F6] spark-2: cannot open TCP to the Ray head's GCS at 198.18.1.12:6379",
                                  "ping -I ic0 198.18.1.12"], "-e", "ray_worker_gcs_reach_timeout=5")


@pytest.mark.readonly
def test_logind_remove_ipc_for_a_login_user_is_a_note_under_rootful_docker_f13(lab, tmp_path, unchanged):
    # The lab's nodes have systemd's tools but no running systemd: logind's configuration is read from
    # its files, as on a Spark. Connecting as a uid-1000 user (a Spark's login user) makes RemoveIPC apply to
    # that user; the lab's dockerd is rootful, as DGX OS's is, so the containers' IPC is root's: a note, no
    # block (the rootless case, which fails, is in tests/unit/plugins/module_utils/test__logind.py).
    args = ["--tags", "preflight", "-e", "preflight_check_logind=true", "-e", "ansible_user=operator-1000"]
    result = lab.playbook(tmp_path, *args)
    output = " ".join((result.stdout + result.stderr).split())  # the callback wraps long messages
    assert result.returncode == 0, output[-3000:]
    assert "NOTE [F13] spark-1: RemoveIPC=yes applies to operator-1000 (uid 1000), but a rootful dockerd" in output
    assert "[F13] spark-1: systemd-logind RemoveIPC=yes applies" not in output
