"""When a container of the cluster may skip docker_container: only the recorded container, running, made from the same
digest; everything else goes to docker_container as before."""

from __future__ import annotations

import hashlib
import pathlib

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.filter.container_plan import container_plan
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._container_plan import (
    DIGEST_VERSION, REASONS, covers, plan, reading, spec_digest)

SPEC = {"name": "vllm-cluster-ray-head", "image": "lab/runtime:1", "pull": "never", "command": ["start", "--head"],
        "env_file": "/etc/c/node.env", "labels": {"inferops.vllm_cluster.node": "spark-1"},
        "restart_policy": "unless-stopped", "restart": False, "state": "started"}
FILES = {"/etc/c/node.env": "e" * 64, "/etc/c/ray_auth_token": "t" * 64}
DIGEST = spec_digest(SPEC, "sha256:img", FILES)
RUNNING = {"exists": True, "id": "c1", "running": True, "started_at": "2026-12-05T21:40:02Z", "image_id": "sha256:img",
           "restart_policy": "unless-stopped"}
RECORD = {"id": "c1", "digest": DIGEST}


@pytest.mark.parametrize(
    "case, spec, container, image_id, record, reason",
    [
        ("the recorded container runs as made", SPEC, RUNNING, "sha256:img", RECORD, ""),
        ("a restart asked for", dict(SPEC, restart=True), RUNNING, "sha256:img", RECORD, "restart"),
        ("another state asked for", dict(SPEC, state="stopped"), RUNNING, "sha256:img", RECORD, "not_started"),
        ("no container", SPEC, {"exists": False}, "sha256:img", RECORD, "absent"),
        ("a container that stopped", SPEC, dict(RUNNING, running=False), "sha256:img", RECORD, "stopped"),
        ("no image under the name", SPEC, RUNNING, "", RECORD, "no_image"),
        ("no record (started by an earlier version)", SPEC, RUNNING, "sha256:img", None, "no_record"),
        ("a record that is not one", SPEC, RUNNING, "sha256:img", ["c1"], "no_record"),
        ("a record without its digest", SPEC, RUNNING, "sha256:img", {"id": "c1"}, "no_record"),
        ("another container made by hand under the name", SPEC, dict(RUNNING, id="c2"), "sha256:img", RECORD,
         "other_container"),
        ("a digest of other inputs", SPEC, RUNNING, "sha256:img", dict(RECORD, digest="0" * 64), "changed"),
        ("the restart policy changed by docker update", SPEC, dict(RUNNING, restart_policy="no"), "sha256:img",
         RECORD, "policy"),
        ("the container runs another image", SPEC, dict(RUNNING, image_id="sha256:old"), "sha256:img", RECORD, "image"),
    ],
)
def test_plan(case, spec, container, image_id, record, reason):
    decided = plan(spec, container, image_id, record, DIGEST)
    assert decided["apply"] is bool(reason), case
    assert decided["reason"] == (REASONS[reason] if reason else "runs as its spec asks"), case


def test_no_restart_policy_reads_as_docker_reports_it():
    spec = dict(SPEC, restart_policy="no")
    assert not plan(spec, dict(RUNNING, restart_policy=""), "sha256:img", {"id": "c1", "digest": "d"}, "d")["apply"]


@pytest.mark.parametrize(
    "case, change, same",
    [
        ("how to apply it is not what it is: restart", {"restart": True}, True),
        ("how to apply it is not what it is: pull", {"pull": "missing"}, True),
        ("a command argument", {"command": ["start", "--head", "--port=6380"]}, False),
        ("a label", {"labels": {"inferops.vllm_cluster.node": "spark-9"}}, False),
        ("the env file's path", {"env_file": "/etc/c/other.env"}, False),
    ],
)
def test_what_the_digest_covers_of_the_spec(case, change, same):
    assert (spec_digest(dict(SPEC, **change), "sha256:img", FILES) == DIGEST) is same, case


@pytest.mark.parametrize(
    "case, image_id, files",
    [
        ("the image under the name changed", "sha256:new", FILES),
        ("the env file's content changed", "sha256:img", dict(FILES, **{"/etc/c/node.env": "f" * 64})),
        ("the Ray token changed", "sha256:img", dict(FILES, **{"/etc/c/ray_auth_token": "u" * 64})),
        ("the Ray token was removed", "sha256:img", dict(FILES, **{"/etc/c/ray_auth_token": ""})),
    ],
)
def test_what_the_digest_covers_beside_the_spec(case, image_id, files):
    assert spec_digest(SPEC, image_id, files) != DIGEST, case


def test_the_filter_reads_the_node_state_module_result():
    node = {"containers": {SPEC["name"]: RUNNING}, "images": {SPEC["image"]: "sha256:img"},
            "files": {path: {"exists": True, "sha256": sha} for path, sha in FILES.items()},
            "records": {"/etc/c/container-vllm-cluster-ray-head.json": RECORD}}
    decided = container_plan(SPEC, node, "/etc/c/container-vllm-cluster-ray-head.json", list(FILES))
    assert decided == {"apply": False, "reason": "runs as its spec asks", "started_at": RUNNING["started_at"],
                       "digest": DIGEST, "id": "c1"}
    node["files"]["/etc/c/ray_auth_token"] = {"exists": False}
    decided = container_plan(SPEC, node, "/etc/c/container-vllm-cluster-ray-head.json", list(FILES))
    assert decided["apply"] and decided["reason"] == REASONS["changed"] and decided["started_at"] == RUNNING["started_at"]


# The task that starts a container, as _container_plan.DIGEST_VERSION knows it: a change to it (a parameter, other
# comparisons) must reach converged nodes, whose records would otherwise keep skipping docker_container.
DIGESTED_TASK = {1: "7b9765dc3f737a5d261efcf75bf8ed4662db4c58fa6f5227bb7d58a65c54f243"}


def test_a_change_to_the_docker_container_task_raises_the_digest_version():
    text = (pathlib.Path(__file__).resolve().parents[4] / "roles" / "_common" / "tasks" / "container_start.yml").read_text()
    task = text[text.index("      community.docker.docker_container:"):text.index("      register: _common_container_result")]
    assert DIGESTED_TASK.get(DIGEST_VERSION) == hashlib.sha256(task.encode()).hexdigest(), (
        "roles/_common/tasks/container_start.yml's docker_container task changed: raise DIGEST_VERSION in "
        "plugins/module_utils/_container_plan.py (every record then stops matching once) and pin the task's new sha256 here")


# --- what the start decision reads, and when an earlier read of the layer answers it ---------------------------------
READING = {"containers": ["vllm-cluster-ray-head"], "images": ["lab/runtime:1"],
           "files": ["/etc/c/ray_auth_token", "/etc/c/node.env"], "records": ["/etc/c/container-vllm-cluster-ray-head.json"]}
READ = {"changed": False, "containers": {"vllm-cluster-ray-head": RUNNING}, "images": {"lab/runtime:1": "sha256:img"},
        "files": {"/etc/c/ray_auth_token": {"exists": True}, "/etc/c/node.env": {"exists": True}},
        "records": {"/etc/c/container-vllm-cluster-ray-head.json": RECORD}, "clock": 1.0}


@pytest.mark.parametrize(
    "case, spec, token_path, wanted",
    [
        ("the spec's name, image, env file, the token and the record", SPEC, "/etc/c/ray_auth_token", READING),
        ("no token (Ray's auth off): only the env file", SPEC, "", dict(READING, files=["/etc/c/node.env"])),
        ("no env file: only the token", dict(SPEC, env_file=None), "/etc/c/ray_auth_token",
         dict(READING, files=["/etc/c/ray_auth_token"])),
        ("a partial spec of the three keys reads the same",
         {k: SPEC[k] for k in ("name", "image", "env_file")}, "/etc/c/ray_auth_token", READING),
    ],
)
def test_reading_asks_what_the_decision_reads(case, spec, token_path, wanted):
    assert reading(spec, token_path, "/etc/c") == wanted, case


@pytest.mark.parametrize(
    "case, node, covered",
    [
        ("a read that asked all of it", READ, True),
        ("a read of the container alone (the layer asked less)", {"containers": READ["containers"]}, False),
        ("another container's read", dict(READ, containers={"vllm-cluster-vllm": RUNNING}), False),
        ("the env file not asked", dict(READ, files={"/etc/c/ray_auth_token": {"exists": True}}), False),
        ("the record not asked", dict(READ, records={}), False),
        ("a failed read", dict(READ, failed=True), False),
        ("a skipped task's result", {"skipped": True, "changed": False}, False),
        ("none passed (no earlier read)", None, False),
        ("a read whose section is not a mapping", dict(READ, images=["lab/runtime:1"]), False),
    ],
)
def test_an_earlier_read_covers_the_decision_only_when_it_asked_everything(case, node, covered):
    assert covers(node, READING) is covered, case


def test_the_filters_are_the_functions():
    from ansible_collections.inferops.vllm_cluster.plugins.filter import container_read, container_read_covers
    assert container_read.FilterModule().filters()["container_read"](SPEC, "/etc/c/ray_auth_token", "/etc/c") == READING
    covered = container_read_covers.FilterModule().filters()["container_read_covers"]
    assert covered(READ, READING) is True and covered(None, READING) is False
