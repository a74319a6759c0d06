# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The records the collection keeps on the controller (vllm_cluster_records_dir: the link gate's, the burn-in's),
read back. Private to the collection."""

from __future__ import annotations

import json
import typing as t


def read(path: str, valid: t.Callable[[t.Any], dict[str, t.Any]]) -> dict[str, t.Any]:
    """The record at path as `valid` accepts it; a missing, unreadable or malformed file reads as no record ({})."""
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except (OSError, ValueError):
        return {}
    return valid(document)
