"""The inventory's shape, judged once per run before anything else: the interconnect network (F5) and the groups."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._inventory import (
    cidr_is_ipv4_network,
    inventory_problems,
)

CIDR = "198.18.1.0/24"


def groups(head=("spark-1",), workers=("spark-2",), cluster=("spark-1", "spark-2")):
    return {"all": list(cluster), "vllm_cluster": list(cluster), "ray_head": list(head), "ray_workers": list(workers)}


@pytest.mark.parametrize(
    "cidr, network",
    [
        ("198.18.1.0/24", True),
        ("198.18.1.12/24", False),  # host bits set: an address, refused as ansible.utils.ipv4 did
        (" 198.18.1.0/24", False),  # written with a blank: refused as ansible.utils.ipv4 did
        ("198.18.1.0/33", False),
        ("198.18.1.0/024", False),  # octal to nft, which reads the firewall's rules as written: /20
        ("198.18.1.0/24\n", False),
        ("198.18.0.0/15", True),
        ("0.0.0.0/0", True),
        ("198.18.1.0", False),  # an address, not a network
        ("fd00::/64", False),
        ("eth1", False),
        ("", False),
        (None, False),
        (24, False),
    ],
)
def test_cidr_is_ipv4_network(cidr, network):
    assert cidr_is_ipv4_network(cidr) is network


@pytest.mark.parametrize(
    "case, cidr, shape, expected",
    [
        ("the lab", CIDR, groups(), []),
        ("three nodes", CIDR, groups(workers=("spark-2", "spark-3"), cluster=("spark-1", "spark-2", "spark-3")), []),
        ("a prefix past 32", "198.18.1.0/33", groups(),
         ['vllm_cluster_interconnect_cidr="198.18.1.0/33" is not an IPv4 network in CIDR form']),
        ("unset", None, groups(), ['vllm_cluster_interconnect_cidr="" is not an IPv4 network']),
        ("two heads", CIDR, groups(head=("spark-1", "spark-2"), workers=()),
         ["The ray_head group holds 2 hosts (spark-1, spark-2); expected exactly one."]),
        ("no head", CIDR, groups(head=(), workers=("spark-1", "spark-2")),
         ["The ray_head group holds 0 hosts (none); expected exactly one."]),
        ("the head a worker too", CIDR, groups(workers=("spark-1", "spark-2")),
         ["spark-1 is in both ray_head and ray_workers"]),
        ("a host in neither group", CIDR, groups(workers=(), cluster=("spark-1", "spark-2")),
         ["spark-2 is in vllm_cluster but in neither ray_head nor ray_workers"]),
        ("every problem at once, in order", "x", groups(head=("spark-1", "spark-2"), workers=("spark-2",),
                                                        cluster=("spark-1", "spark-2", "spark-3")),
         ["is not an IPv4 network", "The ray_head group holds 2 hosts", "spark-2 is in both",
          "spark-3 is in vllm_cluster but in neither"]),
    ],
)
def test_inventory_problems(case, cidr, shape, expected):
    problems = inventory_problems(cidr, shape)
    assert len(problems) == len(expected), (case, problems)
    for start, problem in zip(expected, problems):
        assert start in problem and "Fix: " in problem, (case, problem)
    assert all(p.endswith(f"{TROUBLESHOOTING}#f5") for p in problems if "interconnect_cidr" in p), case
