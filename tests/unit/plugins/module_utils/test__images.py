"""The image on nodes outside a --limit run, for the parity check (F10)."""

from __future__ import annotations

import base64
import json

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._images import outside_images, recorded_ray_version

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
