"""The image on nodes outside a --limit run, for the parity check (F10)."""

from __future__ import annotations

import base64
import json

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._images import (
    outside_images,
    recorded_ray_version,
    release,
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
