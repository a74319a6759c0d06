from __future__ import annotations

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _network
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._network import (
    host_addresses,
    in_cidr,
    interconnect_candidates,
    interconnect_choice,
    parse_cidr,
    ports_taken,
)

SPARK_FACTS = {
    "interfaces": ["lo", "enP7s7", "enp1s0f1np1", "enP2p1s0f1np1", "docker0"],
    "lo": {"device": "lo", "mtu": 65536, "ipv4": {"address": "127.0.0.1", "prefix": "8"}},
    "enP7s7": {"device": "enP7s7", "mtu": 1500, "ipv4": {"address": "10.1.230.180", "prefix": "24"}},
    "enp1s0f1np1": {"device": "enp1s0f1np1", "mtu": 9000, "ipv4": {"address": "192.168.200.12", "prefix": "24"}},
    "enP2p1s0f1np1": {"device": "enP2p1s0f1np1", "mtu": 9000},
    "docker0": {"device": "docker0", "mtu": 1500, "ipv4": {"address": "172.17.0.1", "prefix": "16"}},
}


@pytest.mark.parametrize(
    ("address", "cidr", "inside"),
    [
        ("192.168.200.12", "192.168.200.0/24", True),
        ("192.168.200.12", "192.168.200.77/24", True),  # host bits in the CIDR are tolerated
        ("10.1.230.180", "192.168.200.0/24", False),
        ("127.0.0.1", "127.0.0.0/8", False),  # loopback never counts as an interconnect
        ("127.0.1.1", "127.0.0.0/8", False),
        ("not-an-ip", "192.168.200.0/24", False),
        ("fe80::1", "192.168.200.0/24", False),
    ],
)
def test_in_cidr(address, cidr, inside):
    assert in_cidr(address, cidr) is inside


def test_parse_cidr_rejects_garbage_with_the_value_in_the_message():
    with pytest.raises(ValueError, match="'192.168.300.0/24' is not a valid CIDR"):
        parse_cidr("192.168.300.0/24")


def test_host_addresses_uses_real_device_names_and_secondaries():
    facts = {
        "interfaces": ["br-lab", "eth1"],
        "br_lab": {"device": "br-lab", "mtu": 1500, "ipv4": {"address": "198.18.0.5", "prefix": "24"}},
        "eth1": {
            "device": "eth1",
            "mtu": 9000,
            "ipv4": {"address": "198.18.1.12", "prefix": "24"},
            "ipv4_secondaries": [{"address": "198.18.1.99", "prefix": "24"}],
        },
    }
    assert host_addresses(facts) == [
        {"interface": "br-lab", "address": "198.18.0.5", "prefix": "24", "mtu": 1500},
        {"interface": "eth1", "address": "198.18.1.12", "prefix": "24", "mtu": 9000},
        {"interface": "eth1", "address": "198.18.1.99", "prefix": "24", "mtu": 9000},
    ]


def test_interconnect_candidates_on_a_spark():
    assert interconnect_candidates(SPARK_FACTS, "192.168.200.0/24") == [
        {"interface": "enp1s0f1np1", "address": "192.168.200.12", "prefix": "24", "mtu": 9000}
    ]


def test_interconnect_candidates_none_when_cidr_is_the_wrong_network():
    assert interconnect_candidates(SPARK_FACTS, "192.168.201.0/24") == []


SS = """LISTEN 0      4096      127.0.0.1:10001 0.0.0.0:*
LISTEN 0      2048   198.18.0.180:8000  0.0.0.0:*
LISTEN 0      128            [::]:6379     [::]:*
LISTEN 0      128               *:6380        *:*
"""


@pytest.mark.parametrize(
    "case, wanted, taken",
    [
        ("IPv4, IPv6 and wildcard listeners", {"vllm_cluster_ray_port": 6379, "vllm_server_port": "8000", "x": 6380},
         ["vllm_cluster_ray_port=6379", "x=6380", "vllm_server_port=8000"]),
        ("loopback counts: Ray binds it too", {"vllm_cluster_ray_client_server_port": 10001}, ["vllm_cluster_ray_client_server_port=10001"]),
        ("free", {"vllm_cluster_ray_node_manager_port": 6381}, []),
    ],
)
def test_ports_taken(case, wanted, taken):
    assert ports_taken(SS, wanted) == taken, case


def test_ports_taken_without_listeners():
    assert ports_taken("", {"a": 1}) == [] and ports_taken(None, {"a": 1}) == []


TWO_ADDRESSES = {
    "interfaces": ["eth1"],
    "eth1": {"device": "eth1", "mtu": 1500, "ipv4": {"address": "198.18.1.12"}, "ipv4_secondaries": [{"address": "198.18.1.50"}]},
}


@pytest.mark.parametrize(
    "case, facts, cidr, ip, iface, expected",
    [
        ("a Spark, derived", SPARK_FACTS, "192.168.200.0/24", "", "",
         {"ip": "192.168.200.12", "interface": "enp1s0f1np1", "mtu": 9000, "configured": False}),
        ("a Spark, address configured: the interface is the one carrying it", SPARK_FACTS, "192.168.200.0/24",
         "192.168.200.12", "", {"ip": "192.168.200.12", "interface": "enp1s0f1np1", "mtu": 9000, "configured": True}),
        ("both configured, as given even when wrong (preflight judges)", SPARK_FACTS, "192.168.200.0/24",
         "192.168.200.99", "eth9", {"ip": "192.168.200.99", "interface": "eth9", "mtu": "", "configured": True}),
        ("no address inside", SPARK_FACTS, "192.168.201.0/24", "", "", {"ip": "", "interface": "", "mtu": "", "configured": False}),
        ("two addresses inside: none chosen", TWO_ADDRESSES, "198.18.1.0/24", "", "",
         {"ip": "", "interface": "", "mtu": "", "configured": False}),
        ("two addresses, one configured", TWO_ADDRESSES, "198.18.1.0/24", "198.18.1.50", "",
         {"ip": "198.18.1.50", "interface": "eth1", "mtu": 1500, "configured": True}),
    ],
)
def test_interconnect_choice(case, facts, cidr, ip, iface, expected):
    choice = interconnect_choice(facts, cidr, ip, iface)
    assert {k: choice[k] for k in expected} == expected, case
    assert choice["candidates"] == interconnect_candidates(facts, cidr)


@pytest.mark.parametrize(("value", "network"), [
    ("198.18.1.0/24", "198.18.1.0/24"), ("198.51.100.7", "198.51.100.7/32"), ("2001:db8::/64", "2001:db8::/64"),
    ("198.18.1.12/24", None), ("198.18.1.0/024", None), ("10.0.0.0/08", None), ("fe80::1%eth0", None),
    ("10.0.0.0/255.0.0.0", None), (" 198.18.1.0/24", None), ("198.18.1.0/24\n", None), (24, None), (None, None),
], ids=repr)
def test_written_network_takes_a_network_only_as_nft_reads_it(value, network):
    found = _network.written_network(value)
    assert (str(found) if found else None) == network
