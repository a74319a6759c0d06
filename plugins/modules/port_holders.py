#!/usr/bin/python
# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: port_holders
short_description: Who holds a node's TCP ports before the cluster starts, in one call
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Returns which of the cluster's containers run (each holds its own ports), what listens on TCP (C(ss -Hltn)),
    and, where O(staging_cache_dir) is set, the collection's own staging server, looked for between two reads of the
    ports (a server starting or ending meanwhile is not taken for another process).
  - The preflight role decides from it which of the cluster's ports another process holds (filter C(ports_free_report)).
  - Docker absent, an absent container, or a Docker that refuses the user count as containers not running; its own
    words are returned (RV(docker_error)) for the caller to tell these apart.
  - Changes nothing.
options:
  containers:
    description: The cluster's containers on the node.
    type: list
    elements: str
    default: []
  staging_cache_dir:
    description: The hub cache whose staging lock names the collection's staging server; empty to look for none.
    type: path
    default: ""
  host:
    description: The inventory host the messages name (the node's own name when empty).
    type: str
    default: ""
extends_documentation_fragment:
  - inferops.vllm_cluster.read_only
"""

EXAMPLES = r"""
- name: Read who holds the ports, and the staging server on the head
  inferops.vllm_cluster.port_holders:
    containers: [vllm-cluster-ray-head, vllm-cluster-vllm]
    staging_cache_dir: /var/cache/inferops-vllm-cluster/huggingface
    host: "{{ inventory_hostname }}"
  register: holders
"""

RETURN = r"""
running:
  description: The containers of O(containers) that run.
  returned: always
  type: list
  elements: str
docker_error:
  description: What docker said on stderr (empty when it answered for every container, or is not installed).
  returned: always
  type: str
listening:
  description: C(ss -Hltn)'s output.
  returned: always
  type: str
listening_after:
  description: C(ss -Hltn)'s output after looking for the staging server (the same read when none was looked for).
  returned: always
  type: str
engine:
  description:
    - Whether the node's Docker engine answers (C(answers)), with C(docker version)'s answer in the shape the
      command module registers (what the collection's C(engine_state) filter reads); no RC without a docker CLI.
      Where the engine does not answer, no container is asked about and RV(docker_error) holds its words.
  returned: always
  type: dict
  sample: {rc: 0, stdout: "28.5.1", stderr: "", answers: true}
staging_server:
  description: The pid of the collection's staging server (0 when none), or why it was not looked for.
  returned: always
  type: dict
  sample: {pid: 0, reason: ""}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._direct import ModuleError
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._port_holders import ARGUMENT_SPEC, run


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        module.exit_json(**run(module.params, module))
    except ModuleError as error:
        module.fail_json(msg=f"{error}", **error.extra)


if __name__ == "__main__":
    main()
