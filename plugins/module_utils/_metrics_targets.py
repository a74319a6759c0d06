# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where a Prometheus scrapes the cluster: one file_sd target group per endpoint and node, from the port registry's
rows that serve metrics (module_utils/_ports.py), the backend's traits and each node's interconnect address.

The groups are what Prometheus' file_sd_configs read (a list of {targets, labels}), and what the
prometheus.prometheus role takes as is in prometheus_targets. Private to the collection.
"""

from __future__ import annotations

import typing as t
import urllib.parse

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ports import scraped
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._vllm_serving import WILDCARDS

DEFAULT_PATH = "/metrics"


MESSAGES = {
    "WRITTEN": (
        "{file}: {groups} target groups ({endpoints}). vLLM's /metrics answers without the API key; the firewall "
        "admits Ray's endpoints from the interconnect only (scrape them from a host there)."
    ),
}


def _api_address(api_url: str, head_address: str) -> tuple[str, str]:
    """(host:port, scheme) where vLLM's API answers, from its base URL; a wildcard bind at head_address."""
    parsed = urllib.parse.urlsplit(api_url)
    host = parsed.hostname or ""
    # a server bound to every address (_vllm_serving's reading of a bind address) is reached at the head's own
    host = head_address if host in WILDCARDS else host
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{parsed.port or (443 if parsed.scheme == 'https' else 80)}", parsed.scheme or "http"


def targets(hosts: t.Sequence[str], ips: t.Mapping[str, str], head: str, values: t.Mapping[str, t.Any],
            traits: t.Mapping[str, t.Any], cluster: str, api_url: str, head_address: str = "") -> list[dict[str, t.Any]]:
    """file_sd target groups: every metrics endpoint the backend runs, on each node that opens it.

    hosts: the cluster's nodes in inventory order; ips: each one's interconnect address; head: the head's name;
    values: the port settings (vllm_cluster_port_values); api_url: vLLM's API as clients reach it
    (vllm_server_endpoint.url), at head_address (the head's management address) when it binds every address. An
    endpoint the firewall admits from the interconnect alone is listed at the node's interconnect address; vLLM's
    API where clients reach it.
    """
    groups = []
    for port, number in scraped(values, traits):
        for host in hosts:
            if port.hosts == "head" and host != head:
                continue
            labels = {"job": port.owner, "cluster": cluster, "node": str(host), "endpoint": port.name,
                      "network": port.reach}
            if port.reach == "management":
                address, scheme = _api_address(api_url, head_address)
                if scheme != "http":
                    labels["__scheme__"] = scheme
            else:
                address = f"{ips[host]}:{number}"
            if port.metrics != DEFAULT_PATH:
                labels["__metrics_path__"] = port.metrics
            groups.append({"targets": [address], "labels": labels})
    return groups
