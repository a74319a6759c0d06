"""diagnose's probes: each other node's interconnect ports from the registry, with the node's address; a node that
derived no address (unreachable) is left out rather than probed at an empty address."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm_cluster.plugins.filter.port_probes import port_probes
from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _ports

RAY = {"name": "ray", "runs_ray": True, "rendezvous": False}


def test_each_target_with_its_address_and_the_registrys_ports():
    found = port_probes(["spark-1", "spark-2"], {}, RAY, "spark-1",
                        addresses={"spark-1": "198.18.1.12", "spark-2": "198.18.1.13"})
    for host, address in (("spark-1", "198.18.1.12"), ("spark-2", "198.18.1.13")):
        mine = [p for p in found if p["target"] == host]
        assert mine == [dict(p, target=host, address=address) for p in _ports.probes({}, RAY, host == "spark-1")]
        assert mine, host
    assert any(p["target"] == "spark-1" and p["name"] == "Ray GCS" for p in found)
    assert not any(p["target"] == "spark-2" and p["name"] == "Ray GCS" for p in found)


def test_a_node_without_an_address_is_left_out():
    found = port_probes(["spark-2", "spark-9"], {}, RAY, "spark-1", addresses={"spark-2": "198.18.1.13", "spark-9": ""})
    assert {p["target"] for p in found} == {"spark-2"}
    with pytest.raises(AnsibleFilterError, match="needs addresses="):
        port_probes(["spark-9"], {}, RAY, "spark-1")
