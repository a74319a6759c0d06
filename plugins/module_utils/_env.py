# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Container environments: what an inventory may add, and whether a container still holds the pins.
Private to the collection."""

from __future__ import annotations

import re
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
LINE_BREAKS = ("\n", "\r", "\x00")
# Secrets that have a variable of their own, read by the containers from a root-only file: in an env file
# they would show in `docker inspect` and /proc/*/environ.
SECRET_VARIABLES = {
    "HF_TOKEN": "vllm_cluster_hf_token",
    "HUGGING_FACE_HUB_TOKEN": "vllm_cluster_hf_token",
    "VLLM_API_KEY": "vllm_server_api_key",
    "RAY_AUTH_TOKEN": "vllm_cluster_ray_auth_token",
}


def env_problems(env: dict, reserved: list, variable: str) -> list[str]:
    """One sentence per entry of `variable` (an extra env dict) that an env file cannot carry as asked.

    A line break would start a variable of its own (an unseen RAY_ADDRESS, a second VLLM_HOST_IP); a reserved
    name would override the collection's pinning, since extra lines come after it. Values are never quoted:
    they may be secrets.
    """
    if not isinstance(env, dict):
        return [f"{variable} must be a mapping of variable names to values, not {type(env).__name__}."]
    problems = []
    for name, value in sorted(env.items(), key=lambda item: str(item[0])):
        name = str(name)
        if not ENV_NAME.match(name):
            problems.append(f"{variable}: {name!r} is not an environment variable name (letters, digits and _, "
                            "not starting with a digit).")
        elif name in SECRET_VARIABLES:
            problems.append(f"{variable}: {name} would show in `docker inspect` and /proc/*/environ; set "
                            f"{SECRET_VARIABLES[name]} instead (kept in Vault, read from a root-only file).")
        elif name in reserved:
            problems.append(f"{variable}: {name} is set by the collection (interconnect pinning, Ray auth, caches); "
                            "an extra value would override it unseen.")
        if isinstance(value, (dict, list)) or value is None:
            problems.append(f"{variable}: the value of {name} is not a string or number.")
        elif any(mark in str(value) for mark in LINE_BREAKS):
            problems.append(f"{variable}: the value of {name} holds a line break; in an env file the rest would "
                            "become a variable of its own.")
    return problems


def pinned_env_drift(env_list: list, expected: dict) -> list[str]:
    """The pinned variables a container (its Config.Env list) holds with another value than expected."""
    actual = dict(entry.split("=", 1) for entry in env_list or [] if "=" in entry)
    return [f"{name}={actual.get(name, '(unset)')} (pinned: {value})"
            for name, value in sorted(expected.items()) if actual.get(name) != str(value)]


# docs/troubleshooting.md quotes them; tests/unit/test_troubleshooting_guide.py keeps both in step.
MESSAGES = {
    "F7_CONTAINER": "[F7] {host}: container {container} runs with {drift}: Ray, vLLM, NCCL or Gloo there would use "
                    "another address or interface than {interface} ({node_ip}){staged}. Fix: remove whatever set it "
                    "(an override outside the inventory, a container changed by hand) and run site.yml, which "
                    "recreates the container as rendered. See {doc}#f7",
    # {staged} above, where the weights are staged (the containers are pinned offline too)
    "F17_OFFLINE": ", or a rank would download weights inside vLLM's load window (F17)",
    "EXTRA_ENV_REFUSED": (
        "{host}: {problems} Fix: correct it in the inventory (the pinning follows vllm_cluster_interconnect_cidr; the "
        "API key is vllm_server_api_key). Nothing was written."
    ),
}


def pinned_env_problem(found: t.Mapping[str, t.Any] | None, host: str, container: str, interface: str, node_ip: str,
                       offline: bool) -> str:
    """F7 (and F17 where the weights are staged, `offline`): node_state's `pinned_env` answer for a container (exists,
    drift) as validate's sentence; '' where the container holds every pin, or does not exist (other checks name it)."""
    if not found or not found.get("exists") or not found.get("drift"):
        return ""
    return MESSAGES["F7_CONTAINER"].format(host=host, container=container, drift=", ".join(found["drift"]),
                                           interface=interface, node_ip=node_ip, doc=TROUBLESHOOTING,
                                           staged=MESSAGES["F17_OFFLINE"] if offline else "")
