# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The records the collection keeps of a cluster on the controller (vllm_cluster_records_dir), read back: each kind
with the check of its form that its writer's module owns. Private to the collection."""

from __future__ import annotations

import json
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _bench, _burn_in, _link_gate, _upgrade

KINDS: dict[str, t.Callable[[t.Any], dict[str, t.Any]]] = {
    "link_gate": _link_gate.valid_record,
    "burn_in": _burn_in.valid_record,
    "bench": _bench.valid_record,
    "deployed": _upgrade.valid_record,
}


def read(path: str, kind: str) -> dict[str, t.Any]:
    """The record of `kind` at path; a missing, unreadable or malformed file, or one not of the kind's form, reads as
    no record ({})."""
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except (OSError, ValueError):
        return {}
    return KINDS[kind](document)
