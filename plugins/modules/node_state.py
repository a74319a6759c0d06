#!/usr/bin/python
# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: node_state
short_description: What a node holds of the cluster, read in one call
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Returns, in one call, the cluster's containers on the node (state, ID, image ID, labels, restart policy), the IDs
    of images, what is at given paths (kind, mode, owner, size, sha256) and the collection's own JSON records; the
    layers decide from it what to change instead of asking one task at a time.
  - Never returns a container's environment or the content of a file other than a record; env files, tokens and
    keys are described by their sha256 alone.
  - Never follows a link; a path that is a link is described as one.
  - Changes nothing.
options:
  containers:
    description: Names of containers to describe; a missing one is described as absent.
    type: list
    elements: str
    default: []
  images:
    description: Image references whose IDs to return; a missing one has an empty ID.
    type: list
    elements: str
    default: []
  files:
    description:
      - Paths to describe (a regular file of at most 16 MiB with its sha256); C(~) and C($VARS) are expanded, the
        result is keyed by the path as given.
    type: list
    elements: str
    default: []
  secret_files:
    description:
      - Paths described as in O(files) (and returned with them), but never hashed, for a secret whose presence, mode
        and owner are wanted without a digest that would let a guess of it be checked against the output.
    type: list
    elements: str
    default: []
  records:
    description: Paths of the collection's JSON records (at most 64 KiB) to return parsed; null where none is.
    type: list
    elements: str
    default: []
  python_modules:
    description: Python modules to import in the interpreter the module runs with (the node's, as Ansible runs it).
    type: list
    elements: str
    default: []
  pinned_env:
    description:
      - By container name, the variables pinned to the interconnect and their values; returned is which of them the
        container holds otherwise (F7), never the rest of its environment.
    type: dict
    default: {}
  nft_tables:
    description:
      - nftables tables, each C(<family> <name>) (e.g. C(inet vllm_cluster)), to list as they are in force
        (RV(nft_tables)); the firewall's rules are the node's state too, read with the files they load from.
    type: list
    elements: str
    default: []
  engine:
    description:
      - Ask the Docker engine first whether it answers (C(docker version), as the collection's F26 check does), and
        return its answer (RV(engine)). Where it does not answer, O(containers), O(images) and O(pinned_env) are not
        read (they come back empty) and the module does not fail; the caller judges the answer (F26).
    type: bool
    default: false
  docker_host:
    description: The Docker engine to ask.
    type: str
    default: unix:///var/run/docker.sock
  timeout:
    description: Seconds the Docker engine may take to answer each question.
    type: int
    default: 30
notes:
  - The docker CLI is needed only when O(containers), O(images) or O(pinned_env) is set.
extends_documentation_fragment:
  - inferops.vllm_cluster.read_only
"""

EXAMPLES = r"""
- name: Read the Ray head's container, the image and the files it starts with
  inferops.vllm_cluster.node_state:
    containers: [vllm-cluster-ray-head]
    images: ["{{ vllm_cluster_image }}"]
    files: [/etc/vllm-cluster/ray.env, /etc/vllm-cluster/ray_auth_token]
    records: [/etc/vllm-cluster/container-vllm-cluster-ray-head.json]
  register: node
"""

RETURN = r"""
containers:
  description: By name, the container as the layers need it; never its environment.
  returned: always
  type: dict
  sample:
    vllm-cluster-ray-head: {exists: true, id: 4f3c..., status: running, running: true,
                            started_at: "2026-12-05T21:40:02.1Z", finished_at: "0001-01-01T00:00:00Z", exit_code: 0,
                            image_id: "sha256:6782...", labels: {inferops.vllm_cluster.cluster: vllm-cluster},
                            restart_policy: unless-stopped}
images:
  description: By reference, the image's ID; empty where the node lacks it.
  returned: always
  type: dict
files:
  description: By path, what is there (lstat, links not followed); sha256 empty for anything but a regular file.
  returned: always
  type: dict
  sample:
    /etc/vllm-cluster/ray.env: {exists: true, kind: file, mode: "0600", uid: 0, gid: 0, size: 912, sha256: "9f1c..."}
records:
  description: By path, the record's parsed JSON; null where there is none or it is not JSON.
  returned: always
  type: dict
pinned_env:
  description: By container name, whether it exists and each pinned variable it holds with another value.
  returned: always
  type: dict
  sample:
    vllm-cluster-ray-head: {exists: true, drift: ["NCCL_SOCKET_IFNAME=eth0 (pinned: ic0)"]}
python_modules:
  description: By name, whether the node's Python imports the module.
  returned: always
  type: dict
  sample: {requests: true}
engine:
  description:
    - With O(engine), C(docker version)'s answer as the command module registers it (what the collection's
      C(engine_state) filter reads), and C(answers), whether the engine gave its version; null without
      O(engine).
  returned: always
  type: dict
  sample: {rc: 0, stdout: "28.5.1", stderr: "", answers: true}
nft_tables:
  description:
    - By table as given, C(nft list table)'s answer as C(rc), C(stdout) and C(stderr) (unstripped); C(rc) 0 with
      the rules where the table is loaded, nft's error where it is not, 127 where the node has no nft.
  returned: always
  type: dict
  sample:
    inet vllm_cluster: {rc: 0, stdout: "table inet vllm_cluster {...}", stderr: ""}
clock:
  description: The node's clock (seconds since the epoch) when the read ended.
  returned: always
  type: float
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._direct import ModuleError
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._node_state import ARGUMENT_SPEC, run


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        module.exit_json(**run(module.params, module))
    except ModuleError as error:
        module.fail_json(msg=f"{error}", **error.extra)


if __name__ == "__main__":
    main()
