# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Preflight's judgement of what module port_holders read on one node: which of the ports the node is about to open
(the port registry, _ports) another process already listens on, and what the check could not see.

A port held by another process shows up late and obscurely (a raylet that never registers, an API server that cannot
bind): it is refused before anything starts. A port whose owner already runs is its own (Ray's, vLLM's, the
supervisor's container; the collection's staging server on the weights port). A port counts as taken only where both
of port_holders' reads saw it held (another run's staging server may start or end between them). A user who may not
ask Docker cannot tell the cluster's own containers from another process: the check stands aside and says so.
Private to the collection."""

from __future__ import annotations

import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._engine import NO_ACCESS, NO_ANSWER
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._network import ports_taken
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ports import opened

MESSAGES = {
    "NOT_CHECKED": "NOTE {host}: ports not checked for other processes: {user} may not ask Docker ({error}).",
    "STAGING_SERVER": "NOTE {host}: vllm_cluster_weights_port={port} is held by the collection's staging server "
                      "(pid {pid}): an interrupted run's, which the next staging ends, or another run's.",
    "TAKEN": "{host}: {taken} already in use by another process (`ss -ltnp` on {host} names it); Ray or vLLM would "
             "fail to bind it late and obscurely. Fix: stop that process, or set the variable to a free port.",
}


def report(holders: t.Mapping[str, t.Any], values: t.Mapping[str, t.Any], traits: t.Mapping[str, t.Any],
           is_head: bool, weights_staged: bool, containers: t.Mapping[str, str], host: str,
           user: str = "") -> dict[str, t.Any]:
    """What the node's ports check found.

    holders: port_holders' result. values: the port settings (vllm_cluster_port_values). containers: owner -> the
    container that owns its ports on this node (ray, vllm, supervisor). Returns notes (sentences to show), taken
    (`variable=port` held by another process in both reads), engine_down (ports held while the engine does not
    answer: F26, not "another process") and problem (the refusal, '' when none)."""
    running = set(holders.get("running") or [])
    error = str(holders.get("docker_error") or "")
    staging_pid = int((holders.get("staging_server") or {}).get("pid") or 0)
    held = [owner for owner, name in containers.items() if name in running] + (["weights"] if staging_pid else [])
    wanted = opened(values, traits, bool(is_head), bool(weights_staged), held)
    after = set(ports_taken(str(holders.get("listening_after") or ""), wanted))
    taken = [port for port in ports_taken(str(holders.get("listening") or ""), wanted) if port in after]
    denied = [line for line in error.splitlines() if NO_ACCESS.search(line)]
    notes = []
    if denied:
        notes.append(MESSAGES["NOT_CHECKED"].format(host=host, user=user or "this user", error=denied[0]))
    if staging_pid:
        notes.append(MESSAGES["STAGING_SERVER"].format(host=host, port=values.get("vllm_cluster_weights_port", ""),
                                                       pid=staging_pid))
    return {
        "notes": notes,
        "taken": taken,
        "engine_down": bool(taken) and bool(NO_ANSWER.search(error)),
        "problem": MESSAGES["TAKEN"].format(host=host, taken=", ".join(taken)) if taken and not denied else "",
    }
