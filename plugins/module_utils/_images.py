# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The runtime image on nodes a run does not target (--limit), for the image parity check (F10).
Private to the collection."""

from __future__ import annotations

import base64
import json


def recorded_ray_version(record_b64: str, image_id: str) -> str:
    """The Ray version docker_runtime recorded on a node, when the record names this image ID; '' otherwise."""
    try:
        record = json.loads(base64.b64decode(record_b64 or "").decode() or "{}")
    except (ValueError, UnicodeDecodeError):
        return ""
    if not isinstance(record, dict) or not image_id or record.get("image_id") != image_id:
        return ""
    return str(record.get("ray_version") or "")


def outside_images(image_results: list, record_results: list) -> list[dict]:
    """One row (host, image_id, ray_version) per node outside the run that holds the image.

    image_results / record_results: the loop results of docker_image_info and slurp delegated to those
    nodes (item = host). A node without the image is not deployed yet: nothing to compare. An unrecorded
    Ray version is '' (the image ID still compares).
    """
    records = {r.get("item"): r.get("content", "") for r in record_results or []}
    rows = []
    for result in image_results or []:
        images = result.get("images") or []
        if not images:
            continue
        image_id = images[0].get("Id", "")
        rows.append({"host": result.get("item"), "image_id": image_id,
                     "ray_version": recorded_ray_version(records.get(result.get("item"), ""), image_id)})
    return rows
