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


def release(version: str) -> tuple[int, ...]:
    """The release numbers a version starts with: '0.17.1rc1.dev5+cu130' -> (0, 17, 1); '' -> ()."""
    numbers = []
    for part in str(version or "").strip().lstrip("vV").split("."):
        digits = ""
        for char in part:
            if not char.isdigit():
                break
            digits += char
        if not digits:
            break
        numbers.append(int(digits))
        if len(digits) < len(part):
            break
    return tuple(numbers)


def vllm_version_problem(found: str, required: str, host: str, image: str) -> str:
    """F24: a sentence when the image's vLLM is older than the inventory requires (or unreadable); '' otherwise.

    A pre-release of the required release counts as that release (0.17.0rc1 meets 0.17.0): NGC images carry
    such versions. No requirement ('') asks nothing.
    """
    wanted = release(required)
    if not wanted:
        return ""
    have = release(found)
    fix = (f"Fix: use an image whose vLLM is {required} or newer (pin it by digest), or lower "
           "vllm_cluster_vllm_min_version if the model really runs on an older vLLM.")
    if not have:
        return (f"[F24] {host}: the vLLM version in {image} could not be read ({found or 'no version'}), and "
                f"vllm_cluster_vllm_min_version={required} asks for a check. {fix}")
    width = max(len(have), len(wanted))
    if have + (0,) * (width - len(have)) >= wanted + (0,) * (width - len(wanted)):
        return ""
    return (f"[F24] {host}: {image} carries vLLM {found}, older than vllm_cluster_vllm_min_version={required}: "
            f"vLLM would exit at start (architecture not supported) after every node loaded the image. {fix}")
