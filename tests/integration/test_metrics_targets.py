"""#35 item 5: the file_sd targets file lists every metrics endpoint of the running cluster, and each one answers a
scrape from where the docs say to scrape it: vLLM's /metrics from the management side without the API key (its
/v1 refuses that request), Ray's and the supervisors' on each node's interconnect address."""

from __future__ import annotations

import json
import os
import stat
import urllib.error
import urllib.request

import pytest

from conftest import HEAD_URL

# A scrape from a host on the interconnect (spark-1 is one): the status and the first metric names of the page.
SCRAPE = """
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=10) as page:
    names = {line.split("{")[0].split(" ")[0] for line in page.read().decode().splitlines() if line[:1].isalpha()}
print(page.status, " ".join(sorted(names)))
"""


@pytest.mark.readonly
def test_the_targets_file_lists_every_endpoint_and_each_answers_a_scrape(lab, tmp_path, unchanged):
    targets_file = tmp_path / "file_sd" / "vllm-cluster.json"
    targets_file.parent.mkdir()
    result = lab.playbook(tmp_path, "-e", f"metrics_targets_file={targets_file}", playbook="playbooks/metrics_targets.yml")
    assert result.returncode == 0, result.stdout[-3000:]
    assert stat.S_IMODE(os.stat(targets_file).st_mode) == 0o644
    groups = json.loads(targets_file.read_text())
    listed = {(g["labels"]["job"], g["labels"]["endpoint"], g["labels"]["node"]): g["targets"] for g in groups}
    assert listed == {
        ("vllm", "vLLM API", "spark-1"): ["198.18.0.180:8000"],
        ("ray", "Ray metrics export", "spark-1"): ["198.18.1.12:6383"],
        ("ray", "Ray metrics export", "spark-2"): ["198.18.1.13:6383"],
        ("ray", "Ray autoscaler metrics", "spark-1"): ["198.18.1.12:44217"],
        ("ray", "Ray dashboard metrics", "spark-1"): ["198.18.1.12:44227"],
        ("supervisor", "supervisor (peers, metrics)", "spark-1"): ["198.18.1.12:29530"],
        ("supervisor", "supervisor (peers, metrics)", "spark-2"): ["198.18.1.13:29530"],
    }
    assert {g["labels"]["cluster"] for g in groups} == {"vllm-cluster"}
    # vLLM: from the management side (this controller), no key; the same request to /v1 is refused
    with urllib.request.urlopen(f"http://{listed[('vllm', 'vLLM API', 'spark-1')][0]}/metrics", timeout=10) as page:
        assert page.status == 200 and "vllm:generation_tokens_total" in page.read().decode()
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{HEAD_URL}/v1/models", timeout=10)  # pylint: disable=consider-using-with
    assert refused.value.code == 401
    # Ray and the supervisors: from a host on the interconnect, each endpoint with the metrics it serves there
    prefixes = {"Ray metrics export": "ray_", "Ray autoscaler metrics": "autoscaler_", "Ray dashboard metrics": "ray_",
                "supervisor (peers, metrics)": "vllm_cluster_supervisor_"}
    for (job, endpoint, node), (address,) in listed.items():
        if job == "vllm":
            continue
        status, names = lab.node("spark-1", "python3", "-c", SCRAPE, f"http://{address}/metrics").stdout.split(" ", 1)
        assert status == "200" and prefixes[endpoint] in names, (endpoint, node, names[:300])
