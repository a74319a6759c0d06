# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which Ray token a run places on the nodes (F21). Private to the collection.

The nodes' token is the truth: a running cluster only accepts the token its head started with, so a
controller that holds another one (a second copy of the inventory, a teammate's clone: the token
file is git-ignored) must never replace it as a side effect. Rotation is asked for explicitly.
"""

from __future__ import annotations

import secrets

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING

MESSAGES = {
    "F21_DIFFERS": (
        "[F21] {head}: the cluster's Ray token ({head_file} on the head) differs from the controller's ({source}). "
        "Placing the controller's would lock every running node and vLLM out of Ray; nothing was changed. "
        "Fix: delete {controller_file} to take the head's token, or copy the head's into it (or into Vault); "
        "to replace the cluster's token on purpose, run site.yml -e vllm_cluster_ray_auth_rotate=true. See {doc}#f21"
    ),
    "F21_ROTATE_SAME": (
        "[F21] {head}: vllm_cluster_ray_auth_rotate=true, but vllm_cluster_ray_auth_token is the token the cluster "
        "already has. Fix: put the new token in vllm_cluster_ray_auth_token (Vault), or empty it to have one "
        "generated into {controller_file}. See {doc}#f21"
    ),
    "NOTE_KEEP": "Ray token: the cluster keeps its token.",
    "NOTE_ADOPT": "Ray token: this controller had none; it takes the one on the head, kept in {file}.",
    "NOTE_CREATE": "Ray token: a new cluster; a new token, kept in {file}.",
    "NOTE_ROTATE": (
        "Ray token: ROTATING the token of the cluster (vllm_cluster_ray_auth_rotate): every Ray and vLLM container "
        "restarts."
    ),
}


def new_token() -> str:
    """64 hex digits, as the collection has always generated (256 bits)."""
    return secrets.token_hex(32)


def token_plan(controller_token: str, head_token: str, *, from_inventory: bool, rotate: bool,
               head: str, head_file: str, controller_file: str) -> dict:
    """Decide the token to place on every node.

    controller_token: vllm_cluster_ray_auth_token when set (from_inventory), else the controller file's
    content, '' when neither exists. head_token: the head's token file, '' when absent.
    Returns action (keep, adopt, create, rotate or refuse), the token, whether the controller file must be
    written, and for refuse the message.
    """
    controller_token = (controller_token or "").strip()
    head_token = (head_token or "").strip()
    source = "vllm_cluster_ray_auth_token" if from_inventory else controller_file
    names = {"head": head, "head_file": head_file, "controller_file": controller_file, "source": source,
             "doc": TROUBLESHOOTING}

    def plan(action, token, message=""):
        write = action in ("adopt", "create", "rotate") and not from_inventory
        return {"action": action, "token": token, "write_controller_file": write, "message": message}

    if rotate:
        if from_inventory:
            if controller_token == head_token:
                return plan("refuse", "", MESSAGES["F21_ROTATE_SAME"].format(**names))
            return plan("rotate", controller_token)
        return plan("rotate", new_token())
    if head_token:
        if not controller_token:
            return plan("adopt", head_token)
        if controller_token != head_token:
            return plan("refuse", "", MESSAGES["F21_DIFFERS"].format(**names))
        return plan("keep", head_token)
    if controller_token:
        return plan("keep", controller_token)
    return plan("create", new_token())
