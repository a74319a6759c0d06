#!/usr/bin/python
# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: tcp_reach
short_description: Whether this node can open TCP to each of a list of addresses and ports, in one call
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Connects to every probe of O(probes) at once (each bounded by O(timeout)) and closes the connection; sends
    nothing. A refused port is an answer at once, not retried, so the whole call takes about one O(timeout).
  - diagnose.yml uses it for the other nodes' interconnect ports of the port registry (filter C(port_probes)).
  - Changes nothing.
options:
  probes:
    description:
      - What to connect to. Each needs C(address) and C(port); every other key (the target's name, the port's
        name) is returned as given. An empty C(address) is reported as not probed.
    type: list
    elements: dict
    required: true
  timeout:
    description: Seconds each connection may take.
    type: float
    default: 2
extends_documentation_fragment:
  - inferops.vllm_cluster.read_only
"""

EXAMPLES = r"""
- name: Probe the head's GCS and a worker's raylet over the interconnect
  inferops.vllm_cluster.tcp_reach:
    probes:
      - {target: spark-1, address: 198.18.1.12, port: 6379, name: Ray GCS}
      - {target: spark-2, address: 198.18.1.13, port: 6380, name: Ray raylet}
    timeout: 2
  register: reach
"""

RETURN = r"""
results:
  description: Each probe as given, in the same order, with C(open) and, where it did not open, C(error) (why).
  returned: always
  type: list
  elements: dict
  sample:
    - {target: spark-1, address: 198.18.1.12, port: 6379, name: Ray GCS, open: true, error: ""}
    - {target: spark-2, address: 198.18.1.13, port: 29501, name: mp rendezvous, open: false,
       error: "refused: nothing listens there, or a firewall rejects"}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._tcp_reach import reach


def main() -> None:
    module = AnsibleModule(argument_spec={"probes": {"type": "list", "elements": "dict", "required": True},
                                          "timeout": {"type": "float", "default": 2}},
                           supports_check_mode=True)
    probes, timeout = module.params["probes"], module.params["timeout"]
    bad = [item for item in probes if "port" not in item or "address" not in item]
    if bad:
        module.fail_json(msg=f"every probe needs an address and a port; these lack one: {bad}")
    if not 0 < timeout <= 60:
        module.fail_json(msg=f"timeout={timeout:g} is not within 0-60 s")
    try:
        ports = [int(item["port"]) for item in probes]
    except (TypeError, ValueError) as error:
        module.fail_json(msg=f"a probe's port is not a number: {error}")
    out_of_range = [port for port in ports if not 0 < port < 65536]
    if out_of_range:
        module.fail_json(msg=f"ports outside 1-65535: {out_of_range}")
    module.exit_json(changed=False, results=reach(probes, timeout))


if __name__ == "__main__":
    main()
