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

import hashlib

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._docker_cli import DockerCli, DockerError
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._link_gate import BOOT_ID, transport_env_digest


def _read(module: AnsibleModule, path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except OSError as error:
        module.fail_json(msg=f"{path} cannot be read: {error}")
    return None


def main() -> None:
    module = AnsibleModule(argument_spec={"image": {"type": "str", "required": True},
                                          "env_file": {"type": "path", "required": True},
                                          "docker_host": {"type": "str", "default": "unix:///var/run/docker.sock"},
                                          "timeout": {"type": "int", "default": 30}},
                           supports_check_mode=True)
    params = module.params
    client = DockerCli(module.run_command, module.get_bin_path("docker", required=True), params["docker_host"],
                       params["timeout"])
    try:
        image_id = client.image_id(params["image"])
    except DockerError as error:
        module.fail_json(msg=f"reading the image {params['image']}: {error}")
    env = _read(module, params["env_file"])
    boot = _read(module, BOOT_ID) or ""
    module.exit_json(changed=False, image_id=image_id, env_sha256="" if env is None else transport_env_digest(env),
                     boot_id=hashlib.sha256(boot.strip().encode()).hexdigest() if boot else "")


if __name__ == "__main__":
    main()
