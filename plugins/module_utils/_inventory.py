# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The inventory's shape, judged once per run before anything else (vllm_cluster's tasks/derive.yml): the
interconnect is a network (F5), one head, no host both head and worker, every host in one of the two groups.
Private to the collection."""

from __future__ import annotations

import json
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._network import written_network


# docs/troubleshooting.md quotes them; tests/unit/test_troubleshooting_guide.py keeps both in step.
MESSAGES = {
    "F5_CIDR": "vllm_cluster_interconnect_cidr={cidr} is not an IPv4 network in CIDR form (expected e.g. "
               "192.168.200.0/24). Fix: set it in group_vars to the interconnect subnet that every node holds one "
               "address in. See {doc}#f5",
    "HEADS": "The ray_head group holds {count} hosts ({hosts}); expected exactly one. Fix: put exactly one host under "
             "ray_head and the others under ray_workers in the inventory.",
    "BOTH": "{hosts} is in both ray_head and ray_workers: it would run a head and a worker on one address. Fix: keep "
            "the head only under ray_head.",
    "NEITHER": "{hosts} is in vllm_cluster but in neither ray_head nor ray_workers: it would run no Ray and hold no "
               "node rank. Fix: put it under ray_workers (or remove it from vllm_cluster).",
}


def cidr_is_ipv4_network(cidr: t.Any) -> bool:
    """An IPv4 network written as one, with its prefix length: no host bits set (198.18.1.12/24 is an address, and the
    firewall's rules and preflight's checks read the value as written), no blanks around it."""
    # written as nft reads it (a prefix length with a leading zero is octal there: /024 is /20), with its prefix
    network = written_network(cidr) if isinstance(cidr, str) and "/" in cidr else None
    return network is not None and network.version == 4


def inventory_problems(cidr: t.Any, groups: t.Mapping[str, t.Any]) -> list[str]:
    """Each thing wrong with the interconnect setting and the groups, a sentence with its fix; [] where none is."""
    problems = []
    if not cidr_is_ipv4_network(cidr):
        problems.append(MESSAGES["F5_CIDR"].format(cidr=json.dumps("" if cidr is None else str(cidr)),
                                                   doc=TROUBLESHOOTING))
    heads, workers = list(groups.get("ray_head") or []), list(groups.get("ray_workers") or [])
    if len(heads) != 1:
        problems.append(MESSAGES["HEADS"].format(count=len(heads), hosts=", ".join(heads) or "none"))
    both = [host for host in heads if host in workers]
    if both:
        problems.append(MESSAGES["BOTH"].format(hosts=", ".join(both)))
    loose = [host for host in groups.get("vllm_cluster") or [] if host not in heads and host not in workers]
    if loose:
        problems.append(MESSAGES["NEITHER"].format(hosts=", ".join(loose)))
    return problems
