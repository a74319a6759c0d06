# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The runtime image on a node: its ID, the Ray and vLLM versions it carries (recorded on the node, or read from the
image), and what docker_runtime refuses of it (F10, F11, F24, with F29's answer from _upgrade.py). Private to the
collection."""

from __future__ import annotations

import base64
import json
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING

# What a missing version reads as, where nothing says why.
NOT_PRESENT = "image not present"
# What the container that reads the versions may say (roles/docker_runtime/files/image_versions.py). The image is
# whatever the inventory names: its answer is kept to these keys, each one line of at most ANSWER_LIMIT characters,
# and never names the image ID it is recorded under.
ANSWER_KEYS = ("ray_version", "vllm_version", "ray_error", "vllm_error")
ANSWER_LIMIT = 300

# docs/troubleshooting.md quotes them; tests/unit/test_troubleshooting_guide.py keeps both in step.
MESSAGES = {
    "F11": "[F11] {host}: `import ray` fails inside {image} ({why}). Recent vLLM images no longer ship Ray (NGC's from "
           "26.05), so `ray start` would die with \"ray: command not found\". Fix: serve without Ray, with vLLM's own "
           "launcher (vllm_cluster_backend=mp; the same inventory otherwise), or use an image with Ray, or build one "
           "FROM it with `pip install \"ray[default]\"`. See {doc}#f11",
    "F10": "[F10] the nodes disagree on {image}: {listing} (host, image ID, Ray version). Mixed Ray versions fail with "
           "obscure GCS protocol errors. Fix: load the same archive everywhere, or pin the image by digest "
           "(name@sha256:...) so every node pulls the same bytes. See {doc}#f10",
}


def runtime_image(node: t.Mapping[str, t.Any], image: str, record_path: str, host: str,
                  after: t.Optional[t.Mapping[str, t.Any]] = None,
                  probe: t.Optional[t.Mapping[str, t.Any]] = None) -> dict[str, t.Any]:
    """The image on this node and its versions, from node_state's reads and the throwaway container's output.

    node: the run's read (images, records); after: the read made once the image was put on the node (used only
    where the first read found none); probe: docker_container's result for the container that prints the versions
    (roles/docker_runtime/files/image_versions.py), absent or skipped where it did not run.
    An image ID names its content, so a record of this ID stays true: where one is complete (an earlier version of
    the role recorded no vLLM version), `needs_reading` is false and the image is not started again.
    Returns host, image_id, needs_reading, versions (the record's fields, or the container's JSON line), ray_version,
    vllm_version, detail (the container's last line where it printed no versions: why) and `record` (what to write
    on the node: set only where the container answered).
    """
    image_id = str(((node or {}).get("images") or {}).get(image) or ((after or {}).get("images") or {}).get(image) or "")
    record = ((node or {}).get("records") or {}).get(record_path)
    record = record if isinstance(record, dict) else {}
    recorded = bool(image_id) and record.get("image_id") == image_id and "vllm_version" in record
    versions: dict[str, t.Any] = {k: v for k, v in record.items() if k != "image_id"} if recorded else {}
    detail, write = "", None
    if not recorded and probe and not probe.get("skipped"):
        output = (probe.get("container") or {}).get("Output") or probe.get("msg") or ""
        lines = str(output).splitlines()
        detail = " ".join(lines[-1].split())[:ANSWER_LIMIT] if lines else ""
        if probe.get("status", 1) == 0 and lines:
            try:
                answer = json.loads(lines[-1])
            except ValueError:
                answer = None
            if isinstance(answer, dict):
                versions, detail = _kept(answer), ""
                write = dict(versions, image_id=image_id)
    return {"host": host, "image_id": image_id, "needs_reading": bool(image_id) and not recorded,
            "versions": versions, "ray_version": str(versions.get("ray_version") or ""),
            "vllm_version": str(versions.get("vllm_version") or ""), "detail": detail, "record": write}


def _kept(answer: t.Mapping[str, t.Any]) -> dict[str, str]:
    """The container's answer as far as it is asked: the known keys, each a single line, bounded."""
    return {key: " ".join(str(answer[key]).split())[:ANSWER_LIMIT] for key in ANSWER_KEYS if key in answer}


def image_problems(found: t.Mapping[str, t.Any], image: str, needs_ray: bool, min_version: str,
                   repointed: str = "") -> list[str]:
    """What docker_runtime refuses of the image on one node (runtime_image's answer), in the order it is judged:
    its name re-pointed since the last run that passed (F29, _upgrade.repointed's sentence, passed in), Ray not
    importable where the backend runs Ray (F11), vLLM older than the inventory requires (F24)."""
    host = found.get("host", "")
    problems = [repointed] if repointed else []
    if needs_ray and not found.get("ray_version"):
        why = (found.get("versions") or {}).get("ray_error") or found.get("detail") or NOT_PRESENT
        problems.append(MESSAGES["F11"].format(host=host, image=image, why=why, doc=TROUBLESHOOTING))
    too_old = vllm_version_problem(str(found.get("vllm_version") or ""), min_version, host, image)
    if too_old:
        problems.append(f"{too_old} See {TROUBLESHOOTING}#f24")
    return problems


def image_parity_problem(rows: t.Sequence[t.Mapping[str, t.Any]], image: str) -> str:
    """F10: every node (rows of host, image_id, ray_version: this run's and those outside it) must run the same
    image and Ray version; an unrecorded Ray version ('') compares by the image ID alone. '' where they agree."""
    ids = {str(row.get("image_id") or "") for row in rows}
    versions = {str(row.get("ray_version") or "") for row in rows} - {""}
    if len(ids) <= 1 and len(versions) <= 1:
        return ""
    listing = "; ".join(f"{row.get('host')} {str(row.get('image_id') or '')[:19]} {row.get('ray_version') or 'unrecorded'}"
                        for row in rows)
    return MESSAGES["F10"].format(image=image, listing=listing, doc=TROUBLESHOOTING)


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
