#!/usr/bin/python
# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_serving_check
short_description: Whether a running vLLM server answers one completion within a bound (F20)
version_added: 0.3.0
author: inferops engineering (@inferops)
description:
  - Reads the endpoint and served model from the vLLM container's own command line, then waits for C(/health) and
    asks one short completion, all within O(timeout); fails with the F20 message when it does not answer.
  - Backend-neutral; the cluster_validate role runs it for vLLM's own multi-node launcher (C(vllm_cluster_backend=mp)),
    after checking every rank's container runs. The Ray backend's check is M(inferops.vllm_cluster.ray_cluster_check).
  - Changes nothing.
options:
  container:
    description: The vLLM server's container (rank 0, the one serving the API).
    type: str
    required: true
  api_key_file:
    description: The root-only file holding the API key; empty or absent means no key.
    type: path
    default: ""
  timeout:
    description: Seconds for C(/health) and the completion together.
    type: int
    default: 900
  host:
    description: The inventory host the message names (the node's own name when empty).
    type: str
    default: ""
  alive:
    description: What showed the ranks alive, for the failure message.
    type: str
    default: every rank's container runs
  docker_host:
    description: The Docker engine to ask.
    type: str
    default: unix:///var/run/docker.sock
extends_documentation_fragment:
  - inferops.vllm_cluster.read_only
"""

EXAMPLES = r"""
- name: Check rank 0 answers a completion
  inferops.vllm_cluster.vllm_serving_check:
    container: vllm-cluster-vllm
    api_key_file: /etc/inferops-vllm-cluster/vllm_api_key
    timeout: 300
"""

RETURN = r"""
vllm:
  description: The outcome; C(status) is C(ok), C(failed) or C(not running).
  returned: always
  type: dict
  sample: {"status": "ok", "url": "http://198.18.0.180:8000", "model": "tiny-llama", "waited": 0.4, "completion_tokens": 4}
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._docker_cli import DockerCli, DockerError, status
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._vllm_serving import (
    answer_message,
    check_container_answers,
)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "container": {"type": "str", "required": True},
            "api_key_file": {"type": "path", "default": ""},
            "timeout": {"type": "int", "default": 900},
            "host": {"type": "str", "default": ""},
            "alive": {"type": "str", "default": "every rank's container runs"},
            "docker_host": {"type": "str", "default": "unix:///var/run/docker.sock"},
        },
        supports_check_mode=True,
    )
    p = module.params
    client = DockerCli(module.run_command, module.get_bin_path("docker", required=True), p["docker_host"], 60)
    try:
        server = client.inspect(p["container"])
    except DockerError as exc:
        module.fail_json(msg=f"Could not read container {p['container']}: {exc}", vllm={"status": "unknown"})
    if status(server) != "running":
        module.fail_json(msg=f"{p['container']} is {status(server)}: no vLLM server to ask.",
                         vllm={"status": "not running"})
    outcome = check_container_answers(server.get("Args") or [], p["api_key_file"], max(1, p["timeout"]))
    if outcome["status"] != "ok":
        host = p["host"] or os.uname().nodename
        module.fail_json(msg=answer_message(host, p["container"], outcome, p["timeout"], p["alive"]), vllm=outcome)
    module.exit_json(changed=False, vllm=outcome)


if __name__ == "__main__":
    main()
