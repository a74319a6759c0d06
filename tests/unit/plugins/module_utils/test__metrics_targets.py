"""Where a Prometheus scrapes the cluster: the port registry's metrics rows under each backend, at the right address."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._backends import traits
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._metrics_targets import targets

HOSTS = ["spark-1", "spark-2"]
IPS = {"spark-1": "198.18.1.12", "spark-2": "198.18.1.13"}


def listed(groups):
    return {(g["labels"]["endpoint"], g["labels"]["node"]): (g["targets"], g["labels"]) for g in groups}


@pytest.mark.parametrize("case, backend, values, api_url, expected", [
    ("Ray: vLLM where clients reach it, Ray's on every node's interconnect, the head's extras on the head", "ray", {},
     "http://10.1.230.180:8000", {
         ("Ray metrics export", "spark-1"): "198.18.1.12:6383", ("Ray metrics export", "spark-2"): "198.18.1.13:6383",
         ("Ray autoscaler metrics", "spark-1"): "198.18.1.12:44217",
         ("Ray dashboard metrics", "spark-1"): "198.18.1.12:44227", ("vLLM API", "spark-1"): "10.1.230.180:8000"}),
    ("mp: no Ray, vLLM's API alone (its headless ranks serve none)", "mp", {}, "http://10.1.230.180:8000",
     {("vLLM API", "spark-1"): "10.1.230.180:8000"}),
    ("the inventory's ports", "ray", {"vllm_cluster_ray_metrics_export_port": "7383", "vllm_server_port": 8001},
     "http://10.1.230.180:8001", {
         ("Ray metrics export", "spark-1"): "198.18.1.12:7383", ("Ray metrics export", "spark-2"): "198.18.1.13:7383",
         ("Ray autoscaler metrics", "spark-1"): "198.18.1.12:44217",
         ("Ray dashboard metrics", "spark-1"): "198.18.1.12:44227", ("vLLM API", "spark-1"): "10.1.230.180:8001"}),
])
def test_targets(case, backend, values, api_url, expected):
    groups = targets(HOSTS, IPS, "spark-1", values, traits(backend), "vllm-cluster", api_url)
    assert {key: targets_[0] for key, (targets_, _labels) in listed(groups).items()} == expected, case
    for _key, (targets_, labels) in listed(groups).items():
        assert len(targets_) == 1 and labels["cluster"] == "vllm-cluster"
        assert labels["network"] == ("management" if labels["job"] == "vllm" else "interconnect")
        assert "__scheme__" not in labels and "__metrics_path__" not in labels


@pytest.mark.parametrize("api_url, address, scheme", [
    ("https://api.example.org", "api.example.org:443", "https"),
    ("http://[fd00::12]:8000", "[fd00::12]:8000", None),
])
def test_the_api_address_and_scheme(api_url, address, scheme):
    vllm = [g for g in targets(HOSTS, IPS, "spark-1", {}, traits("mp"), "c", api_url) if g["labels"]["job"] == "vllm"]
    assert vllm[0]["targets"] == [address]
    assert vllm[0]["labels"].get("__scheme__") == scheme


def test_a_server_bound_to_every_address_is_listed_at_the_heads_address():
    vllm = targets(HOSTS, IPS, "spark-1", {}, traits("mp"), "c", "http://0.0.0.0:8000", "10.1.230.180")
    assert vllm[0]["targets"] == ["10.1.230.180:8000"]
