# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the container runtime's layer (role docker_runtime) needs of a node before anything changes: a Python that
community.docker's modules can use, and the image archive where the inventory names one. Every problem at once, each a
sentence naming host, value and fix. Private to the collection."""

from __future__ import annotations

import typing as t

MESSAGES = {
    "requests": "{host}: {python} cannot import requests, and community.docker's modules need it to reach the Docker "
                "engine. docker_runtime installs it only on Debian/Ubuntu with docker_runtime_manage_engine. Fix: "
                "install the distribution's python3-requests (or point ansible_python_interpreter at a Python that "
                "has it).",
    "archive": "{host}: vllm_cluster_image_archive={archive} does not exist {where}. Fix: point it at a `docker save` "
               "archive of {image}, or empty it to pull the image.",
    "RAY_AUTH_UNSUPPORTED": (
        "{host}: vllm_cluster_ray_auth=token, but {image} has Ray {ray}, and token authentication needs Ray {needs}+. "
        "Fix: use an image with a newer Ray, or set vllm_cluster_ray_auth=auto (authentication off, with a warning)."
    ),
    "RAY_AUTH_OFF_ASKED": (
        "WARNING {host}: Ray token authentication is OFF (vllm_cluster_ray_auth=off). Anyone who reaches the Ray ports "
        "can run code on the cluster: keep them firewalled to the interconnect."
    ),
    "RAY_AUTH_OFF_OLD_RAY": (
        "WARNING {host}: Ray token authentication is OFF (Ray {ray} in the image predates it ({needs}+)). Anyone who "
        "reaches the Ray ports can run code on the cluster: keep them firewalled to the interconnect."
    ),
    "REGISTRY_LOGIN_INCOMPLETE": (
        "{host}: vllm_cluster_registry_login needs registry, username and password (has {has}). Fix: set all three (the "
        "password in Vault), or remove it to pull without a login."
    ),
    "NO_NVIDIA_CTK": (
        "{host}: vllm_cluster_gpu is true but nvidia-ctk is not installed, so containers cannot get the GPU. Fix: "
        "install nvidia-container-toolkit (DGX OS ships it), or set vllm_cluster_gpu=false on a CPU host."
    ),
    "NO_ENGINE_NOT_DEBIAN": (
        "{host}: no Docker engine answers (`docker version`: {error}) and this role installs one only on Debian/Ubuntu "
        "(this host: {distribution}). Fix: install Docker and start it, then re-run."
    ),
}


def prerequisite_problems(host: str, node: t.Mapping[str, t.Any]) -> list[str]:
    """The node's problems for the runtime's layer, as node says them: `python` (the interpreter Ansible runs),
    `requests` (whether it imports requests), `installs_requests` (whether the role would install it: an engine it
    manages on Debian/Ubuntu), `archive` (the image archive named; empty for none), `archive_on_node` (where it must
    be: on the node, else on the controller), `archive_found` and `image`."""
    problems = []
    if not node.get("requests") and not node.get("installs_requests"):
        problems.append(MESSAGES["requests"].format(host=host, python=node.get("python") or "the node's Python"))
    if node.get("archive") and not node.get("archive_found"):
        problems.append(MESSAGES["archive"].format(
            host=host, archive=node["archive"], image=node.get("image"),
            where="on the node" if node.get("archive_on_node") else "on the controller"))
    return problems
