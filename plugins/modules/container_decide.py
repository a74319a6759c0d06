#!/usr/bin/python
# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: container_decide
short_description: Whether one container of the cluster must be started or updated, from one read of its node
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Reads the container, its image, the files its processes start with (the Ray token, its env file) and the record
    its last start left (O(config_dir)/container-NAME.json) with M(inferops.vllm_cluster.node_state), unless an
    earlier read of the layer (O(read)) asked all of it, and decides whether community.docker.docker_container must
    run (plugins/module_utils/_container_plan.py). The decision is to leave the container only where the spec asks
    for it started and no restart, and the recorded container runs, made from the same spec, image and start files,
    under the spec's restart policy and image.
  - The entry point C(container) of the private role C(_common) runs it; an action plugin (the decision is made on
    the controller, the read on the node). Changes nothing. Run it under C(no_log), as the role does; its result
    holds the spec. The decision's reason shows at C(-v), for each host.
  - The read runs M(inferops.vllm_cluster.node_state) from inside this action, with the task's connection, become and
    check mode; C(module_defaults) set for node_state do not reach it, and its warnings are not passed on.
options:
  spec:
    description: The container's community.docker.docker_container parameters (name, image, env_file, restart,
      restart_policy, state, and the rest; all but how to apply it, C(restart) and C(pull), are digested).
    type: dict
    required: true
  token_path:
    description: The node's Ray token file (C(vllm_cluster_ray_token_path)); its fingerprint labels the container.
    type: str
    required: true
  config_dir:
    description: The node's configuration directory (C(vllm_cluster_config_dir)), where each start leaves its record.
    type: str
    required: true
  read:
    description: A node_state result of the layer, read since its last write to the node. Where it answers every
      question of the decision it stands for the module's own read (one module start fewer).
    type: raw
extends_documentation_fragment:
  - inferops.vllm_cluster.read_only
"""

EXAMPLES = r"""
- name: Decide whether docker_container must start or update the container, in one read of the node
  inferops.vllm_cluster.container_decide:
    spec: "{{ _common_container }}"
    token_path: "{{ vllm_cluster_ray_token_path }}"
    config_dir: "{{ vllm_cluster_config_dir }}"
    read: "{{ _common_container_read }}"
  register: _common_container_decided
  no_log: true
"""

RETURN = r"""
plan:
  description: C(apply) (whether docker_container must run), C(reason), C(started_at) of the running container (empty
    when it does not run), C(digest) (what the start's record will hold) and C(id) of the container found.
  returned: success
  type: dict
record:
  description: The path of the container's record on the node.
  returned: success
  type: str
token:
  description: Whether the node holds the Ray token file (C(exists)) and the first 16 hex digits of its sha256.
  returned: success
  type: dict
spec:
  description: The spec as given, for the start to read without evaluating it again.
  returned: success
  type: dict
read:
  description: Whether the module read the node (false where O(read) answered everything).
  returned: success
  type: bool
"""
