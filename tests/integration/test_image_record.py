"""The Ray and vLLM versions docker_runtime records per image ID (so later runs start no container to read
them): a record is trusted only for the image ID it names, and what it says feeds the F10 and F24 checks."""

from __future__ import annotations

import json

import pytest
from conftest import task_outcome

RECORD = "/etc/inferops-vllm-cluster/image-ray-version.json"
RECORD_TASK = "Record the image's versions on the node"

# Changes the nodes only where the tests of its own group look: a group's tests run one after another, beside
# another group's (tests/suite/run: tests/suite/side-by-side, pytest --group NAME).
pytestmark = pytest.mark.grouped("runtime-image")


@pytest.fixture()
def worker_image(lab):
    """The worker's image ID; the record on spark-2 is removed afterwards (the next run writes it again)."""
    image = lab.node("spark-2", "docker", "inspect", "--format", "{{.Config.Image}}", "vllm-cluster-ray-worker").stdout.strip()
    image_id = lab.node("spark-2", "docker", "image", "inspect", "--format", "{{.Id}}", image).stdout.strip()
    yield image_id
    lab.node("spark-2", "rm", "-f", RECORD)


def write_record(lab, image_id: str, ray_version: str, **more: str) -> None:
    record = {"image_id": image_id, "ray_version": ray_version, "vllm_version": "0.32.0+cpu"}
    lab.node("spark-2", "sh", "-c", f"cat > {RECORD}", stdin=json.dumps({**record, **more}))


def test_a_record_for_this_image_is_used(lab, tmp_path, worker_image, unchanged):
    write_record(lab, worker_image, "9.9.9")
    output = lab.expect_failure(tmp_path, ["[F10] the nodes disagree on", "spark-2 " + worker_image[:19] + " 9.9.9"],
                                "--tags", "docker_runtime")
    assert "spark-1 " + worker_image[:19] + " 9.9.9" not in output


def test_a_node_outside_the_limit_is_compared_too(lab, tmp_path, worker_image, unchanged):
    """--limit spark-1: spark-2's recorded Ray version still disagrees, and is named."""
    write_record(lab, worker_image, "9.9.9")
    lab.expect_failure(tmp_path, ["[F10] the nodes disagree on", "spark-2 " + worker_image[:19] + " 9.9.9"],
                       "--limit", "spark-1", "--tags", "docker_runtime")


def test_a_record_for_another_image_is_not_trusted(lab, tmp_path, worker_image, unchanged):
    write_record(lab, "sha256:" + "0" * 64, "9.9.9")
    result = lab.playbook(tmp_path, "--tags", "docker_runtime")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert task_outcome(output, RECORD_TASK, "spark-2") == "changed"
    record = json.loads(lab.node("spark-2", "cat", RECORD).stdout)
    assert record["image_id"] == worker_image
    assert record["ray_version"] != "9.9.9"
    assert record["vllm_version"].split(".")[0].isdigit(), record


def test_an_image_whose_vllm_is_too_old_is_refused_before_ray_starts(lab, tmp_path, worker_image, unchanged):
    """F24 from a recorded version, on every node named at once; then from the image itself, where an earlier
    version of the role recorded no vLLM version."""
    write_record(lab, worker_image, "2.52.1", vllm_version="0.10.1.1")
    output = lab.expect_failure(tmp_path, ["[F24] spark-2: inferops-lab/runtime:", "carries vLLM 0.10.1.1, older than "
                                           "vllm_cluster_vllm_min_version=0.17.0"],
                                "--tags", "docker_runtime", "-e", "vllm_cluster_vllm_min_version=0.17.0")
    assert "[F24] spark-1" not in output
    lab.node("spark-2", "sh", "-c", f"cat > {RECORD}", stdin=json.dumps({"image_id": worker_image, "ray_version": "2.52.1"}))
    lab.expect_failure(tmp_path, ["[F24] spark-1: ", "[F24] spark-2: ", "older than vllm_cluster_vllm_min_version=99.0"],
                       "--tags", "docker_runtime", "-e", "vllm_cluster_vllm_min_version=99.0")


@pytest.fixture()
def rayless_image(lab, worker_image):
    """An image on spark-2 whose `import ray` fails as in vLLM images without Ray: the runtime image with a `ray`
    package first on the path that raises ImportError (built inside the node, from the image it already has)."""
    name = "inferops-lab/no-ray:test"
    dockerfile = (f"FROM {worker_image}\n"
                  "RUN mkdir -p /shadow/ray && echo 'raise ImportError(\"No module named ray (test image)\")' "
                  "> /shadow/ray/__init__.py\n"
                  "ENV PYTHONPATH=/shadow\n"
                  "LABEL inferops.vllm_cluster.lab=test\n")
    lab.node("spark-2", "docker", "build", "-q", "-t", name, "-", stdin=dockerfile)
    yield name
    lab.node("spark-2", "docker", "rmi", "-f", name, check=False)


def test_an_image_without_ray_is_refused_with_its_import_error_f11(lab, tmp_path, rayless_image, unchanged):
    """F11 read from the image itself (its throwaway container's output), before any Ray container is touched;
    nothing is recorded for it and the throwaway container is gone."""
    lab.expect_failure(tmp_path, [f"[F11] spark-2: `import ray` fails inside {rayless_image}",
                                  "No module named ray (test image)", "Recent vLLM images no longer ship Ray"],
                       "--tags", "docker_runtime", "--limit", "spark-2", "-e", f"vllm_cluster_image={rayless_image}")
    assert lab.node("spark-2", "docker", "ps", "-aq", "--filter", "name=image-versions").stdout.strip() == ""
    image_id = lab.node("spark-2", "docker", "image", "inspect", "--format", "{{.Id}}", rayless_image).stdout.strip()
    assert image_id not in lab.node("spark-2", "cat", RECORD, check=False).stdout
