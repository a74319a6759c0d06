"""The runtime image on a node (its ID, versions, what docker_runtime refuses of it) and on nodes outside a --limit
run, for the parity check (F10)."""

from __future__ import annotations

import base64
import json

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._images import (
    image_parity_problem,
    image_problems,
    outside_images,
    recorded_ray_version,
    release,
    runtime_image,
    vllm_version_problem,
)

A, B = "sha256:" + "a" * 64, "sha256:" + "b" * 64


def record(image_id, version):
    return base64.b64encode(json.dumps({"image_id": image_id, "ray_version": version}).encode()).decode()


@pytest.mark.parametrize(
    "case, content, image_id, version",
    [
        ("this image's record", record(A, "2.52.1"), A, "2.52.1"),
        ("another image's record", record(B, "2.52.1"), A, ""),
        ("no record", "", A, ""),
        ("garbage", base64.b64encode(b"not json").decode(), A, ""),
        ("not base64", "%%%", A, ""),
    ],
)
def test_recorded_ray_version(case, content, image_id, version):
    assert recorded_ray_version(content, image_id) == version, case


def test_outside_images_rows():
    images = [{"item": "spark-2", "images": [{"Id": A}]}, {"item": "spark-3", "images": []},
              {"item": "spark-4", "images": [{"Id": B}]}]
    records = [{"item": "spark-2", "content": record(A, "9.9.9")}, {"item": "spark-3", "failed": True},
               {"item": "spark-4", "failed": True, "msg": "file not found"}]
    assert outside_images(images, records) == [
        {"host": "spark-2", "image_id": A, "ray_version": "9.9.9"},
        {"host": "spark-4", "image_id": B, "ray_version": ""},
    ]
    assert outside_images([], []) == []


@pytest.mark.parametrize(
    "case, version, expected",
    [
        ("plain", "0.17.1", (0, 17, 1)),
        ("NGC's four numbers", "0.10.1.1", (0, 10, 1, 1)),
        ("a pre-release", "0.17.0rc1", (0, 17, 0)),
        ("a dev build", "0.22.1rc1.dev124+gace95c9cf.d20260603.cu132", (0, 22, 1)),
        ("the lab's CPU build", "0.32.0+cpu", (0, 32, 0)),
        ("a leading v", "v0.9", (0, 9)),
        ("nothing", "", ()),
        ("not a version", "unknown", ()),
    ],
)
def test_release(case, version, expected):
    assert release(version) == expected, case


IMAGE = "nvcr.io/nvidia/vllm:25.09-py3"


@pytest.mark.parametrize(
    "case, found, required, problem",
    [
        ("the issue's mismatch", "0.10.1.1", "0.17.0", "carries vLLM 0.10.1.1, older than vllm_cluster_vllm_min_version=0.17.0"),
        ("new enough", "0.17.1", "0.17.0", ""),
        ("exactly", "0.17.0", "0.17.0", ""),
        ("fewer numbers", "0.17", "0.17.0", ""),
        ("a pre-release of the release asked for", "0.17.0rc1", "0.17.0", ""),
        ("minor beats patch", "0.9.9", "0.17.0", "older than"),
        ("nothing asked", "0.1.0", "", ""),
        ("unreadable, something asked", "", "0.17.0", "could not be read (no version)"),
        ("unreadable, nothing asked", "", "", ""),
    ],
)
def test_vllm_version_problem(case, found, required, problem):
    message = vllm_version_problem(found, required, "spark-1", IMAGE)
    if not problem:
        assert message == "", case
    else:
        assert problem in message, (case, message)
        assert message.startswith("[F24] spark-1: ") and "Fix: " in message, case


RECORD = "/etc/inferops-vllm-cluster/image-ray-version.json"
VERSIONS = {"ray_version": "2.52.1", "vllm_version": "0.32.0+cpu"}


def node(image_id="", record=None):
    return {"images": {IMAGE: image_id}, "records": {RECORD: record}}


def container(status, output):
    return {"status": status, "container": {"Output": output}, "changed": False}


SKIPPED = {"skipped": True, "changed": False}
# an image's error that would print a line of its own, and run long: one line, bounded
HOSTILE = "x\n[F11] spark-1: fine" + "y" * 400
HOSTILE_KEPT = ("x [F11] spark-1: fine" + "y" * 400)[:300]


@pytest.mark.parametrize(
    "case, read, after, probe, image_id, needs_reading, versions, detail, record",
    [
        ("a complete record of this image stands", node(A, dict(VERSIONS, image_id=A)), None, SKIPPED,
         A, False, VERSIONS, "", None),
        ("a record of another image does not", node(A, dict(VERSIONS, image_id=B)), None, None, A, True, {}, "", None),
        ("an older role's record (no vLLM version) does not", node(A, {"image_id": A, "ray_version": "2.52.1"}), None,
         None, A, True, {}, "", None),
        ("a record that is not the collection's JSON does not", node(A, "garbage"), None, None, A, True, {}, "", None),
        ("no image, nothing read", node(), None, None, "", False, {}, "", None),
        ("no image, a record of an empty ID", node("", dict(VERSIONS, image_id="")), None, None, "", False, {}, "", None),
        ("the image put on the node is read after", node(), {"images": {IMAGE: B}}, None, B, True, {}, "", None),
        ("the read after is not read where the first read found the image", node(A), {"images": {IMAGE: B}}, None,
         A, True, {}, "", None),
        ("the container's versions, to record", node(A), None, container(0, "some warning\n" + json.dumps(VERSIONS)),
         A, True, VERSIONS, "", dict(VERSIONS, image_id=A)),
        ("ray missing: its error, recorded too", node(A), None,
         container(0, json.dumps({"ray_version": "", "ray_error": "ModuleNotFoundError: No module named 'ray'",
                                  "vllm_version": "0.32.0"})),
         A, True, {"ray_version": "", "ray_error": "ModuleNotFoundError: No module named 'ray'", "vllm_version": "0.32.0"},
         "", {"image_id": A, "ray_version": "", "ray_error": "ModuleNotFoundError: No module named 'ray'",
              "vllm_version": "0.32.0"}),
        ("the container failed: its last line says why, nothing recorded", node(A), None,
         container(1, "Traceback\nexec: python3: not found"), A, True, {}, "exec: python3: not found", None),
        ("the container printed no JSON: its line says why, nothing recorded", node(A), None, container(0, "hello"),
         A, True, {}, "hello", None),
        ("an image that answers more than asked: its keys kept to the versions, the record under its own ID",
         node(A), None, container(0, json.dumps(dict(VERSIONS, image_id=B, extra={"a": 1}, ray_error=HOSTILE))),
         A, True, dict(VERSIONS, ray_error=HOSTILE_KEPT), "", dict(VERSIONS, ray_error=HOSTILE_KEPT, image_id=A)),
        ("the container did not start: the module's message", node(A), None,
         {"status": None, "msg": "Error starting container", "failed": True}, A, True, {}, "Error starting container",
         None),
    ],
)
def test_runtime_image(case, read, after, probe, image_id, needs_reading, versions, detail, record):
    found = runtime_image(read, IMAGE, RECORD, "spark-2", after, probe)
    assert (found["host"], found["image_id"], found["needs_reading"], found["versions"], found["detail"],
            found["record"]) == ("spark-2", image_id, needs_reading, versions, detail, record), case
    assert found["ray_version"] == str(versions.get("ray_version") or "")
    assert found["vllm_version"] == str(versions.get("vllm_version") or "")


def found(**fields):
    return dict({"host": "spark-2", "image_id": A, "versions": {}, "ray_version": "2.52.1", "vllm_version": "0.32.0",
                 "detail": ""}, **fields)


@pytest.mark.parametrize(
    "case, image, needs_ray, min_version, repointed, codes, details",
    [
        ("a good image", found(), True, "0.17.0", "", [], []),
        ("no Ray, the mp backend asks none", found(ray_version=""), False, "0.17.0", "", [], []),
        ("no Ray: its import error", found(ray_version="", versions={"ray_error": "No module named ray"}), True, "",
         "", ["[F11] spark-2: `import ray` fails inside"], ["(No module named ray)", "vllm_cluster_backend=mp"]),
        ("no Ray: the container's last line", found(ray_version="", detail="exec failed"), True, "", "",
         ["[F11]"], ["(exec failed)"]),
        ("no image at all", found(image_id="", ray_version="", vllm_version=""), True, "", "", ["[F11]"],
         ["(image not present)"]),
        ("vLLM too old", found(vllm_version="0.10.1"), True, "0.17.0", "", ["[F24] spark-2:"], ["0.10.1"]),
        ("re-pointed first, then each of the image's own", found(ray_version="", vllm_version="0.10.1"), True, "0.17.0",
         "[F29] spark-2: the tag moved.", ["[F29]", "[F11]", "[F24]"], []),
    ],
)
def test_image_problems(case, image, needs_ray, min_version, repointed, codes, details):
    problems = image_problems(image, IMAGE, needs_ray, min_version, repointed)
    assert [p.split(" ")[0] for p in problems] == [c.split(" ")[0] for c in codes], (case, problems)
    for code, problem in zip(codes, problems):
        assert problem.startswith(code), (case, problem)
    for own in problems[1 if repointed else 0:]:
        assert own.endswith(f"{TROUBLESHOOTING}#{own[1:own.index(']')].lower()}"), (case, own)
    for detail in details:
        assert any(detail in p for p in problems), (case, detail, problems)


def row(host, image_id, version):
    return {"host": host, "image_id": image_id, "ray_version": version}


@pytest.mark.parametrize(
    "case, rows, listing",
    [
        ("one image, one Ray", [row("spark-1", A, "2.52.1"), row("spark-2", A, "2.52.1")], ""),
        ("an unrecorded version compares by ID", [row("spark-1", A, "2.52.1"), row("spark-2", A, "")], ""),
        ("two images", [row("spark-1", A, "2.52.1"), row("spark-2", B, "2.52.1")],
         f"spark-1 {A[:19]} 2.52.1; spark-2 {B[:19]} 2.52.1"),
        ("one image, two Rays (a record written by hand)", [row("spark-1", A, "2.52.1"), row("spark-2", A, "9.9.9")],
         f"spark-1 {A[:19]} 2.52.1; spark-2 {A[:19]} 9.9.9"),
        ("a node without the image", [row("spark-1", A, "2.52.1"), row("spark-2", "", "")],
         f"spark-1 {A[:19]} 2.52.1; spark-2  unrecorded"),
    ],
)
def test_image_parity_problem(case, rows, listing):
    problem = image_parity_problem(rows, IMAGE)
    if not listing:
        assert problem == "", case
    else:
        assert problem.startswith(f"[F10] the nodes disagree on {IMAGE}: {listing} (host, image ID, Ray version)."), case
        assert problem.endswith(f"{TROUBLESHOOTING}#f10"), case
