# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the link gate's record is compared with, read on a node in one call (module link_inputs): the serving image's
ID, the digest of the env file's transport variables, the boot's ID. Private to the collection."""

from __future__ import annotations

import hashlib
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._direct import ModuleError
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._docker_cli import DockerCli, DockerError
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._link_gate import BOOT_ID, transport_env_digest


# Module link_inputs's options (plugins/modules/link_inputs.py documents them), checked by the module where it runs
# as one and by its action on the controller where the node's Python runs run() directly (_direct).
ARGUMENT_SPEC = {
    "image": {"type": "str", "required": True},
    "env_file": {"type": "path", "required": True},
    "docker_host": {"type": "str", "default": "unix:///var/run/docker.sock"},
    "timeout": {"type": "int", "default": 30},
}


def _text(path: str) -> str | None:
    """The file's text; None where there is no such file (ModuleError where it cannot be read)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ModuleError(f"{path} cannot be read: {error}") from None


def run(params: t.Mapping[str, t.Any], node: t.Any) -> dict[str, t.Any]:
    """Module link_inputs' result: what the gate's record is compared with (the image's ID, the digest of the
    transport variables of the env file, the boot's ID), read on the node; node: AnsibleModule or _direct.Node."""
    client = DockerCli(node.run_command, node.get_bin_path("docker", required=True), params["docker_host"],
                       params["timeout"])
    try:
        image_id = client.image_id(params["image"])
    except DockerError as error:
        raise ModuleError(f"reading the image {params['image']}: {error}") from None
    env = _text(params["env_file"])
    boot = _text(BOOT_ID) or ""
    return {"changed": False, "image_id": image_id, "env_sha256": "" if env is None else transport_env_digest(env),
            "boot_id": hashlib.sha256(boot.strip().encode()).hexdigest() if boot else ""}
