"""Preflight's wiring decisions (F5, F7, F8, F9, F12, ports) as tables, on the Sparks' own facts and on lab-like
facts built here."""

from __future__ import annotations

import json
import pathlib

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._preflight import (
    CHECKS,
    check,
    mtu_mismatch,
    parallelism_problem,
    preflight_problems,
    shared_addresses,
    wiring_problems,
)

SPARKS = pathlib.Path(__file__).resolve().parents[3] / "fixtures" / "sparks"
CIDR = "198.18.1.0/24"


def spark(host):
    return json.loads((SPARKS / f"{host}.json").read_text())


def lab_node(*ifaces, default=("eth0", "198.18.0.180")):
    """Facts of a lab-like node: (name, address[, secondary...]) per interface; the default route on eth0."""
    facts = {"interfaces": [i[0] for i in ifaces] + ["lo"], "lo": {"device": "lo", "ipv4": {"address": "127.0.0.1"}},
             "default_ipv4": {"interface": default[0], "address": default[1]}, "all_ipv4_addresses": []}
    for name, address, *secondaries in ifaces:
        facts[name] = {"device": name, "mtu": 1500, "ipv4": {"address": address},
                       "ipv4_secondaries": [{"address": a} for a in secondaries]}
        facts["all_ipv4_addresses"] += [address, *secondaries]
    return facts


LAB = lab_node(("eth0", "198.18.0.180"), ("eth1", "198.18.1.12"))


@pytest.mark.parametrize(
    "case, facts, cidr, ip, iface, configured, ansible_host, expected",
    [
        ("the Sparks, derived", spark("spark-1"), "192.168.200.0/24", "192.168.200.12", "enp1s0f1np1", False, "10.1.230.180", []),
        ("the lab, derived", LAB, CIDR, "198.18.1.12", "eth1", False, "", []),
        ("a CIDR covering the management network", LAB, "198.18.0.0/23", "198.18.1.12", "eth1", False, "",
         ["[F5] spark-1: vllm_cluster_interconnect_cidr=198.18.0.0/23 also covers its management address 198.18.0.180 "
          "(default route, eth0); Ray could register it and the firewall would admit the management network. Fix: "
          "narrow the CIDR to the interconnect's own subnet (e.g. 198.18.1.0/24).",
          # and so it holds two addresses in it: both named at once
          "[F5] spark-1: 2 addresses inside the interconnect 198.18.0.0/23 (198.18.0.180 on eth0, 198.18.1.12 on eth1)"]),
        ("no address inside", LAB, "198.18.7.0/24", "", "", False, "",
         ["[F5] spark-1: no address inside the interconnect 198.18.7.0/24 on any interface (this host has 198.18.0.180, "
          "198.18.1.12). Ray would hang retrying the GCS. Fix: bring up the interconnect port with its address, or "
          "correct vllm_cluster_interconnect_cidr."]),
        ("two addresses inside", lab_node(("eth0", "198.18.0.180"), ("eth1", "198.18.1.12", "198.18.1.50")), CIDR, "", "",
         False, "",
         ["[F5] spark-1: 2 addresses inside the interconnect 198.18.1.0/24 (198.18.1.12 on eth1, 198.18.1.50 on eth1); "
          "expected exactly one. Fix: set vllm_cluster_node_ip in host_vars/spark-1 to the address Ray and NCCL must use."]),
        ("configured outside the CIDR", LAB, CIDR, "198.18.0.180", "eth0", True, "",
         ["[F5] spark-1: vllm_cluster_node_ip=198.18.0.180 lies outside the interconnect 198.18.1.0/24",
          "[F5] spark-1: vllm_cluster_node_ip=198.18.0.180 is not assigned on any interface",
          '[F7] spark-1: interface "eth0" does not carry 198.18.0.180']),
        ("configured, not on the host", LAB, CIDR, "198.18.1.99", "eth1", True, "",
         ["[F5] spark-1: vllm_cluster_node_ip=198.18.1.99 is not assigned on any interface (interconnect addresses here: "
          "198.18.1.12). `ray start --node-ip-address` would hang retrying the GCS.",
          '[F7] spark-1: interface "eth1" does not carry 198.18.1.99 (interfaces: eth0, eth1, lo; 198.18.1.99 is on no '
          "interface)."]),
        ("an interface that does not exist", LAB, CIDR, "198.18.1.12", "enp1s0f1np1", False, "",
         ['[F7] spark-1: interface "enp1s0f1np1" does not exist (interfaces: eth0, eth1, lo; 198.18.1.12 is on eth1). '
          "NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME would name the wrong NIC. Fix: remove "
          "vllm_cluster_interconnect_interface from host_vars/spark-1 to derive it from the CIDR, or correct it."]),
        ("an ansible_host inside the CIDR (management reached over it)", LAB, CIDR, "198.18.1.12", "eth1", False,
         "198.18.1.40", ["[F5] spark-1: vllm_cluster_interconnect_cidr=198.18.1.0/24 also covers its management address "
                         "ansible_host 198.18.1.40;"]),
        ("ansible_host is the interconnect address itself", LAB, CIDR, "198.18.1.12", "eth1", False, "198.18.1.12", []),
        ("a hostname as ansible_host", LAB, CIDR, "198.18.1.12", "eth1", False, "spark-1.lan", []),
    ],
)
def test_wiring_problems(case, facts, cidr, ip, iface, configured, ansible_host, expected):
    problems = wiring_problems(facts, cidr, ip, iface, configured, ansible_host, "spark-1")
    assert len(problems) == len(expected), (case, problems)
    for problem, start in zip(problems, expected):
        assert problem.startswith(start), (case, problem)


@pytest.mark.parametrize(
    "case, ips, expected",
    [
        ("unique", {"spark-1": "198.18.1.12", "spark-2": "198.18.1.13"}, ""),
        ("shared", {"spark-1": "198.18.1.50", "spark-2": "198.18.1.50", "spark-3": "198.18.1.14"},
         "[F8] 198.18.1.50 on spark-1 and spark-2: the same interconnect address on several hosts; Ray and vLLM need a "
         "unique IP per node (\"Every node should have a unique IP address\"). Fix: give each host its own address in "
         "198.18.1.0/24 (check vllm_cluster_node_ip in host_vars)."),
        ("two pairs", {"a": "198.18.1.2", "b": "198.18.1.2", "c": "198.18.1.3", "d": "198.18.1.3"},
         "[F8] 198.18.1.2 on a and b; 198.18.1.3 on c and d: "),
        ("hosts without an address are not a pair", {"spark-1": "", "spark-2": ""}, ""),
    ],
)
def test_shared_addresses(case, ips, expected):
    found = shared_addresses(ips, CIDR)
    assert (found == "") if not expected else found.startswith(expected), (case, found)


def test_mtu_mismatch():
    assert mtu_mismatch([["spark-1", "eth1", 9000], ["spark-2", "eth1", "9000"]]) == ""
    assert mtu_mismatch([["spark-1", "eth1", 1500], ["spark-2", "eth1", 1400]]) == (
        "[F12] interconnect MTU differs between nodes: spark-1 eth1 1500, spark-2 eth1 1400; large NCCL/Gloo messages "
        "stall on the smaller one. Fix: set the same MTU on every node's interconnect port (9000 on a ConnectX-7 RoCE "
        "link), or set vllm_cluster_mtu_mismatch=warn to proceed.")


RANGE = {"vllm_cluster_ray_min_worker_port": 10002, "vllm_cluster_ray_max_worker_port": 19999}


@pytest.mark.parametrize(
    "tp, pp, nodes, per_node, fits",
    [(2, 1, 2, 1, True), (1, 1, 1, 1, True), (2, 2, 2, 2, True), (4, 1, 2, 1, False), (2, 2, 3, 1, False)],
)
def test_parallelism_problem(tp, pp, nodes, per_node, fits):
    problem = parallelism_problem(tp, pp, nodes, per_node)
    assert (problem == "") is fits
    if not fits:
        assert problem.startswith(f"[F9] cluster: vllm_server_tensor_parallel_size {tp} x vllm_server_pipeline_parallel_size {pp} = ")


# The table preflight runs (filter preflight_problems), over hostvars as vllm_cluster leaves them.
GUIDE = "https://example.test/troubleshooting.md"
SETTINGS = {"guide": GUIDE, "cidr": CIDR, "ports": {**RANGE, "vllm_cluster_ray_port": 6379, "vllm_server_port": 8000},
            "mtu_mismatch": "fail", "gpus_per_node": 1,
            "model": "tiny", "tensor_parallel_size": 2, "pipeline_parallel_size": 1,
            "backend": "ray", "head": "spark-1", "mp_master_address": "198.18.1.12", "mp_master_check": True}
MP = {"backend": "mp"}


def hostvars_of(**nodes):
    """hostvars for lab-like hosts: name=(interconnect address[, mtu[, pinned address]])."""
    found = {}
    for host, (address, *rest) in nodes.items():
        mtu = rest[0] if rest else 1500
        facts = lab_node(("eth0", "198.18.0.180"), ("eth1", address))
        facts["eth1"]["mtu"] = mtu
        pinned = rest[1] if len(rest) > 1 else ""
        found[host.replace("_", "-")] = {
            "ansible_facts": facts, "vllm_cluster_node_ip": pinned or address, "vllm_cluster_interconnect_interface": "eth1",
            "vllm_cluster_node_ip_pinned": bool(pinned), "vllm_cluster_interconnect_mtu": mtu, "ansible_host": ""}
    return found


TWO = hostvars_of(spark_1=("198.18.1.12",), spark_2=("198.18.1.13",))


@pytest.mark.parametrize(
    "case, hostvars, settings, scope, expected",
    [
        ("the lab's two nodes", TWO, {}, "node", []),
        ("the lab's cluster", TWO, {}, "cluster", []),
        ("a pinned address not on the host, each sentence linked to its section",
         hostvars_of(spark_1=("198.18.1.12", 1500, "198.18.1.99")), {}, "node",
         [("[F5] spark-1: vllm_cluster_node_ip=198.18.1.99 is not assigned", f"See {GUIDE}#f5"),
          ("[F7] spark-1: interface \"eth1\" does not carry 198.18.1.99", f"See {GUIDE}#f7")]),
        ("a port twice, on every host, with the fix", TWO,
         {"ports": {**RANGE, "vllm_cluster_ray_port": 8000, "vllm_server_port": 8000}}, "node",
         [("spark-1: vllm_cluster_ray_port=8000 is also given to vllm_server_port. Fix: give each a free port",),
          ("spark-2: vllm_cluster_ray_port=8000",)]),
        ("two hosts, one address", hostvars_of(spark_1=("198.18.1.12",), spark_2=("198.18.1.12",)), {}, "cluster",
         [("[F8] 198.18.1.12 on spark-1 and spark-2", f"See {GUIDE}#f8")]),
        ("MTU differs: fails", hostvars_of(spark_1=("198.18.1.12", 9000), spark_2=("198.18.1.13", 1500)), {}, "cluster",
         [("[F12] interconnect MTU differs between nodes: spark-1 eth1 9000, spark-2 eth1 1500", f"See {GUIDE}#f12")]),
        ("MTU differs, warn: not fatal", hostvars_of(spark_1=("198.18.1.12", 9000), spark_2=("198.18.1.13", 1500)),
         {"mtu_mismatch": "warn"}, "cluster", []),
        ("MTU differs, warn: a warning", hostvars_of(spark_1=("198.18.1.12", 9000), spark_2=("198.18.1.13", 1500)),
         {"mtu_mismatch": "warn"}, "warning",
         [("[F12] interconnect MTU differs between nodes: spark-1 eth1 9000, spark-2 eth1 1500", f"See {GUIDE}#f12")]),
        ("MTU differs, fail: no warning besides the failure",
         hostvars_of(spark_1=("198.18.1.12", 9000), spark_2=("198.18.1.13", 1500)), {}, "warning", []),
        ("TP 4 on two GPUs", TWO, {"tensor_parallel_size": 4}, "serving",
         [("[F9] cluster: vllm_server_tensor_parallel_size 4", f"See {GUIDE}#f9")]),
        ("no model", TWO, {"model": " "}, "serving", [("vllm_server_model is empty: vLLM would have nothing to serve.",)]),
        ("mp: the two nodes split TP 2 evenly", TWO, MP, "serving", []),
        ("mp: TP 3 on two nodes of two GPUs cannot be split evenly", TWO,
         {**MP, "tensor_parallel_size": 3, "gpus_per_node": 2}, "serving",
         [("[F9] cluster: vllm_server_tensor_parallel_size 3 x vllm_server_pipeline_parallel_size 1 = 3 ranks cannot "
           "be split evenly", f"See {GUIDE}#f9")]),
        ("ray: Ray places TP 3 on two nodes of two GPUs", TWO, {"tensor_parallel_size": 3, "gpus_per_node": 2},
         "serving", []),
        ("mp: the master on the head's interconnect address", TWO, MP, "cluster", []),
        ("mp: the master on the head's management address (the seed's failure)", TWO,
         {**MP, "mp_master_address": "198.18.0.180"}, "cluster",
         [("[F19] spark-1: vLLM's master address 198.18.0.180 (vllm_cluster_mp_master_addr) is not the head's "
           "interconnect address 198.18.1.12 (eth1, ", f"See {GUIDE}#f19")]),
        ("mp: the F19 checks forced off", TWO, {**MP, "mp_master_address": "198.18.0.180", "mp_master_check": "False"},
         "cluster", []),
        ("ray: no master to check", TWO, {"mp_master_address": "198.18.0.180"}, "cluster", []),
        ("the serving checks are vllm_server's, not the cluster's", TWO, {"model": "", "tensor_parallel_size": 4},
         "cluster", []),
    ],
)
def test_preflight_problems(case, hostvars, settings, scope, expected):
    problems = preflight_problems(list(hostvars), hostvars, {**SETTINGS, **settings}, scope)
    assert len(problems) == len(expected), (case, problems)
    for problem, (start, *link) in zip(problems, expected):
        assert problem.startswith(start), (case, problem)
        assert problem.endswith(link[0]) if link else GUIDE not in problem, (case, problem)


def test_a_registered_check_runs_in_its_scope_and_is_linked(monkeypatch):
    # Adding a check is a function and its message: registering it is enough for preflight to run it.
    monkeypatch.setattr("ansible_collections.inferops.vllm_cluster.plugins.module_utils._preflight.CHECKS", list(CHECKS))
    check("node")(lambda node, settings: [f"[F99] {node.host}: invented."])
    problems = preflight_problems(list(TWO), TWO, SETTINGS, "node")
    assert problems == [f"[F99] spark-1: invented. See {GUIDE}#f99", f"[F99] spark-2: invented. See {GUIDE}#f99"]
    assert preflight_problems(list(TWO), TWO, SETTINGS, "cluster") == []
    with pytest.raises(ValueError):
        check("everywhere")
