"""diagnose.yml is for a sick cluster: a node that cannot be reached is marked, the rest is still reported,
and the cluster's own names and ports are the ones it reads."""

from __future__ import annotations

import copy

import pytest


@pytest.mark.readonly
def test_an_unreachable_node_is_marked_and_the_rest_reported(lab, tmp_path, unchanged):
    hosts = copy.deepcopy(lab.hosts)
    # a third node whose container does not exist: the connection fails as on a powered-off server
    hosts["vllm_cluster"]["children"]["ray_workers"]["hosts"]["spark-9"] = {"ansible_host": "inferops-lab-spark-9"}
    report = tmp_path / "diagnose.md"
    result = lab.playbook(tmp_path, "--check", "-e", f"diagnose_report={report}", hosts=hosts, playbook="playbooks/diagnose.yml")
    output = result.stdout + result.stderr
    assert report.exists(), output[-3000:]
    text = report.read_text()
    assert "### spark-9\n\n**UNREACHABLE**" in text
    # the reachable nodes are fully reported: their containers, and Ray's table read from the head
    assert "vllm-cluster-ray-head" in text and "vllm-cluster-ray-worker" in text
    assert "spark-1" in text and "198.18.1.13" in text
    # the probe takes each node's ports from the port registry: a worker's raylet, the head's GCS, both open
    assert "| spark-1 | spark-2 (198.18.1.13) | 6380 | Ray raylet | open |" in text, text
    assert "| spark-2 | spark-1 (198.18.1.12) | 6379 | Ray GCS | open |" in text, text
    assert "| spark-1 | spark-2 (198.18.1.13) | 6379 |" not in text, "the GCS is the head's alone"
    assert "UNREACHABLE spark-9: nothing could be read from it" in output
    # the guide's address as the roles know it (vllm_cluster_troubleshooting_url), read from a reachable node
    assert "Troubleshooting guide: https://github.com/inferops/vllm_cluster/blob/main/docs/troubleshooting.md\n" in text


@pytest.mark.readonly
def test_a_custom_cluster_name_is_the_one_read(lab, tmp_path, unchanged):
    report = tmp_path / "diagnose.md"
    result = lab.playbook(tmp_path, "--check", "-e", f"diagnose_report={report}", "-e", "vllm_cluster_name=other",
                          playbook="playbooks/diagnose.yml")
    assert report.exists(), (result.stdout + result.stderr)[-3000:]
    text = report.read_text()
    # nothing of cluster "other" runs here: Ray is looked for in its head container, no container of vllm-cluster listed
    assert "container 'other-ray-head' does not exist" in text
    assert "| vllm-cluster-ray-head |" not in text


@pytest.mark.readonly
def test_a_backend_the_table_refuses_is_named_and_the_rest_reported(lab, tmp_path, unchanged):
    report = tmp_path / "diagnose.md"
    result = lab.playbook(tmp_path, "--check", "-e", f"diagnose_report={report}", "-e", "vllm_cluster_backend=slurm",
                          playbook="playbooks/diagnose.yml")
    output = result.stdout + result.stderr
    assert report.exists(), output[-3000:]
    text = report.read_text()
    assert "Backend: `slurm` (refused: vllm_cluster_backend 'slurm' is not a backend of this collection." in text, text
    # asked as a Ray cluster: the lab runs one
    assert "| spark-2 | spark-1 (198.18.1.12) | 6379 | Ray GCS | open |" in text, text
