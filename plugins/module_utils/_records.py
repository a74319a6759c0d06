# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The records the collection keeps of a cluster on the controller (vllm_cluster_records_dir), read back: each kind
with the check of its form that its writer's module owns. Private to the collection."""

from __future__ import annotations

import json
import os
import stat
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _bench, _burn_in, _link_gate, _upgrade
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._regular_file import regular_file

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


def already_written(path: str, content: str, mode: str = "0600", directory_mode: str = "0700") -> bool:
    """Whether the record at path is already exactly what the writer would write: a regular file of this content
    and mode, owned by whoever runs this, in a directory of directory_mode; a link, another owner or mode, or
    anything unreadable is not (the writer then writes it, which puts all of that right)."""
    try:
        directory = os.lstat(os.path.dirname(path) or ".")
    except OSError:
        return False
    if not stat.S_ISDIR(directory.st_mode) or f"{stat.S_IMODE(directory.st_mode):04o}" != directory_mode:
        return False
    wanted = content.encode("utf-8")
    with regular_file(path) as handle:
        if handle is None:
            return False
        info = os.fstat(handle.fileno())
        if (f"{stat.S_IMODE(info.st_mode):04o}" != mode or info.st_uid != os.geteuid()
                or info.st_size != len(wanted)):
            return False
        return handle.read(len(wanted) + 1) == wanted
