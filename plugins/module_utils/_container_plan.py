# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether a container of the cluster already runs as its spec asks, decided from one read of the node.

community.docker.docker_container answers the same question by comparing every parameter with the running
container, but it costs a module start and a dozen API calls per container on every run (0.9 s each on the lab).
After each start the collection records, beside the container's ID, a digest of everything the container was made
from: the spec, the image's ID and the files it reads when its processes start (the env file, the Ray token). A
run whose digest matches the record of the very container that runs needs no docker_container call. Anything else
(no record, another container under the name, a stopped one, a changed input, a restart asked for) goes to
docker_container as before. Private to the collection.
"""

from __future__ import annotations

import hashlib
import json
import typing as t

# Raised whenever the task that starts containers starts them differently for the same spec (another parameter,
# other comparisons): every record made before then stops matching, and docker_container compares once more.
DIGEST_VERSION = 1

# Spec entries that say how to run docker_container, not what the container is.
_NOT_THE_CONTAINER = ("restart", "pull")


def spec_digest(spec: t.Mapping[str, t.Any], image_id: str, file_digests: t.Mapping[str, str]) -> str:
    """sha256 over the spec (less how to apply it), the image's ID and the sha256 of each file it starts with."""
    document = {"version": DIGEST_VERSION,
                "spec": {key: value for key, value in spec.items() if key not in _NOT_THE_CONTAINER},
                "image_id": image_id, "files": dict(file_digests)}
    return hashlib.sha256(json.dumps(document, sort_keys=True, default=str).encode()).hexdigest()


# Why a container goes to docker_container, in the order checked; the first that holds is reported.
# What a user reads where a container did not start (_common's container_start.yml); the error is docker_container's,
# its secrets masked by the caller.
MESSAGES = {
    "START_FAILED": "{host}: community.docker.docker_container could not bring {container} to {state}: {error}",
}

REASONS = {
    "restart": "a restart was asked for",
    "not_started": "the spec asks for another state than started",
    "absent": "no such container",
    "stopped": "the container does not run",
    "no_image": "the node has no image under the spec's name",
    "no_record": "no record of how it was made",
    "other_container": "another container than the recorded one runs under the name",
    "changed": "its spec, image or start files changed",
    # Changed on the container itself since (docker update, a re-tagged image under a recorded container):
    # docker_container puts them back.
    "policy": "its restart policy was changed on the node",
    "image": "it runs another image than the spec's",
}


def plan(spec: t.Mapping[str, t.Any], container: t.Mapping[str, t.Any], image_id: str,
         record: t.Mapping[str, t.Any] | None, digest: str) -> dict[str, t.Any]:
    """{apply, reason, started_at}: apply is False only when the recorded container runs, made from this digest.

    container: the node state's description of it; record: what the last start recorded ({id, digest}), or None.
    """
    record = record if isinstance(record, t.Mapping) else {}
    checks = (
        ("restart", bool(spec.get("restart"))),
        ("not_started", spec.get("state", "started") != "started"),
        ("absent", not container.get("exists")),
        ("stopped", not container.get("running")),
        ("no_image", not image_id),
        ("no_record", not record.get("id") or not record.get("digest")),
        ("other_container", record.get("id") != container.get("id")),
        ("changed", record.get("digest") != digest),
        ("policy", (container.get("restart_policy") or "no") != (spec.get("restart_policy") or "no")),
        ("image", container.get("image_id") != image_id),
    )
    reason = next((key for key, holds in checks if holds), "")
    return {"apply": bool(reason), "reason": REASONS.get(reason, "runs as its spec asks"),
            "started_at": container.get("started_at", "") if container.get("running") else ""}


def reading(spec: t.Mapping[str, t.Any], token_path: str, config_dir: str) -> dict[str, list[str]]:
    """What the start decision reads of the node (node_state's arguments): the container, its image, the files its
    processes read at start (the Ray token, its env file) and its record. Only the spec's name, image and env_file
    count, so that a layer can read them before it builds the whole spec."""
    name = spec["name"]
    return {
        "containers": [name],
        "images": [spec["image"]],
        "files": [path for path in (token_path, spec.get("env_file")) if path],
        "records": [f"{config_dir}/container-{name}.json"],
    }


def covers(node: t.Any, wanted: t.Mapping[str, t.Sequence[str]]) -> bool:
    """Whether a read of the node (a node_state result) answers every question of `wanted` (a reading()): a layer's
    earlier read stands for the decision's own only when it asked all of it (and only where the layer wrote none of
    it since: its caller's condition). A failed or skipped read covers nothing."""
    if not isinstance(node, t.Mapping) or node.get("failed") or node.get("skipped"):
        return False
    return all(isinstance(node.get(kind), t.Mapping) and all(key in node[kind] for key in keys)
               for kind, keys in wanted.items())


def from_read(spec: t.Mapping[str, t.Any], node: t.Mapping[str, t.Any], record: str,
              start_files: t.Sequence[str]) -> dict[str, t.Any]:
    """plan() from a node_state result: {apply, reason, started_at, digest, id}."""
    container = (node.get("containers") or {}).get(spec["name"]) or {"exists": False}
    image_id = (node.get("images") or {}).get(spec["image"], "")
    files = node.get("files") or {}
    digest = spec_digest(spec, image_id, {path: (files.get(path) or {}).get("sha256", "") for path in start_files})
    decided = plan(spec, container, image_id, (node.get("records") or {}).get(record), digest)
    return dict(decided, digest=digest, id=container.get("id", ""))


def decision(spec: t.Mapping[str, t.Any], node: t.Mapping[str, t.Any], wanted: t.Mapping[str, t.Sequence[str]],
             token_path: str) -> dict[str, t.Any]:
    """Everything the start needs from one read of the node (node_state's answer to `wanted`, a reading() of the
    spec): the plan, the record's path and the Ray token's fingerprint for the container's label ({exists, sha256}:
    its first 16 hex digits only, so that the token's whole sha256 never stands in an output; digested as it is, see
    DIGEST_VERSION)."""
    record = wanted["records"][0]
    token = (node.get("files") or {}).get(token_path) or {}
    return {"plan": from_read(spec, node, record, wanted["files"]), "record": record,
            "token": {"exists": bool(token.get("exists")), "sha256": str(token.get("sha256") or "")[:16]}}
