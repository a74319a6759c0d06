#!/usr/bin/python
# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: link_inputs
short_description: What the link gate's figures on this node depend on, read in one call
version_added: 0.5.0
author: inferops engineering (@inferops)
description:
  - Returns the serving image's ID (from the node's Docker engine), a sha256 over the lines of the node's env file
    that the collective reads (NCCL, Gloo, UCX, the torch and MPI socket pinning, CUDA and the NVIDIA runtime), and a
    sha256 of this boot's id. The link gate measures again when any of them changed since its last record.
  - Never returns the env file's content, which may hold the operator's extra environment; a change to names the
    collective does not read (a token path, a cache directory) does not measure again.
  - Changes nothing.
options:
  image:
    description: The serving image (C(vllm_cluster_image)).
    type: str
    required: true
  env_file:
    description: The node's pinned env file (C(vllm_cluster_env_file)); missing reads as none.
    type: path
    required: true
  docker_host:
    description: The Docker engine to ask.
    type: str
    default: unix:///var/run/docker.sock
  timeout:
    description: Seconds the Docker engine may take to answer.
    type: int
    default: 30
notes:
  - Read by the link_gate role; the P(inferops.vllm_cluster.link_gate_plan#filter) filter compares the result with the
    last record.
extends_documentation_fragment:
  - inferops.vllm_cluster.read_only
"""

EXAMPLES = r"""
- name: Read what the link gate would measure with
  inferops.vllm_cluster.link_inputs:
    image: "{{ vllm_cluster_image }}"
    env_file: "{{ vllm_cluster_env_file }}"
  register: inputs
"""

RETURN = r"""
image_id:
  description: The image's ID; empty when the node lacks it.
  returned: always
  type: str
  sample: sha256:6782ae1cfb59c78138e93d521d85de9488687f27216e1c455c4da4c97fb727e0
env_sha256:
  description: sha256 of the env file's lines the collective reads, sorted; empty when the file is missing.
  returned: always
  type: str
boot_id:
  description: sha256 of the kernel's id of the running boot.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._direct import ModuleError
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._link_inputs import ARGUMENT_SPEC, run


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        module.exit_json(**run(module.params, module))
    except ModuleError as error:
        module.fail_json(msg=f"{error}", **error.extra)


if __name__ == "__main__":
    main()
