"""vLLM spans the lab's two nodes over Ray: where its ranks run, and a rank that dies (F20)."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

import pytest

from conftest import HEAD_URL, api_key

RANK_ROW = r"{rank}\s+{host}\s+{address}\s+ALIVE"


def ranks(lab) -> list[dict]:
    """vLLM's ranks of its live driver, from Ray's actor table inside the head's container."""
    probe = (
        "import json, ray\n"
        "ray.init(address='auto', logging_level='ERROR', log_to_driver=False)\n"
        "from ray._private import state\n"
        "live = {j['JobID'] for j in state.jobs() if not j['IsDead']}\n"
        "print(json.dumps([{'name': a['Name'], 'address': a['Address']['IPAddress'], 'pid': a['Pid'], 'state': a['State']}\n"
        "                  for a in state.actors().values() if (a['Name'] or '').startswith('vllm_Worker') and a['JobID'] in live]))\n"
    )
    out = lab.node("spark-1", "docker", "exec", "vllm-cluster-ray-head", "python3", "-c", probe).stdout
    return json.loads(out.strip().splitlines()[-1])


def health() -> str:
    try:
        with urllib.request.urlopen(f"{HEAD_URL}/health", timeout=5) as response:
            return str(response.status)
    except urllib.error.HTTPError as exc:
        return str(exc.code)
    except OSError as exc:
        return type(exc).__name__


def complete() -> int:
    request = urllib.request.Request(
        f"{HEAD_URL}/v1/completions", method="POST",
        data=json.dumps({"model": "tiny-llama", "prompt": "Hello", "max_tokens": 4}).encode(),
        headers={"Authorization": f"Bearer {api_key()}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)["usage"]["completion_tokens"]


@pytest.mark.readonly
def test_validate_shows_one_rank_on_each_node_and_a_completion_answers(lab, tmp_path):
    result = lab.playbook(tmp_path, "--tags", "validate")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert re.search(RANK_ROW.format(rank="TP0", host="spark-1", address=r"198\.18\.1\.12"), output), output[-3000:]
    assert re.search(RANK_ROW.format(rank="TP1", host="spark-2", address=r"198\.18\.1\.13"), output), output[-3000:]
    assert sorted(r["address"] for r in ranks(lab)) == ["198.18.1.12", "198.18.1.13"]
    assert complete() > 0


@pytest.mark.readonly
def test_lab_runtime_without_its_platform_plugin_refuses_ray_as_the_note_says(lab):
    # VLLM_PLUGINS names the plugins vLLM may load; an empty name loads none of them.
    check = (
        "from vllm.config import ParallelConfig\n"
        "from vllm.v1.executor.ray_utils import initialize_ray_cluster\n"
        "initialize_ray_cluster(ParallelConfig(tensor_parallel_size=2, distributed_executor_backend='ray'))\n"
    )
    refused = lab.node("spark-1", "docker", "exec", "-e", "VLLM_PLUGINS=", "-e", "RAY_ADDRESS=auto",
                       "vllm-cluster-ray-head", "python3", "-c", check, check=False)
    assert refused.returncode != 0
    assert "ValueError: current platform cpu does not support ray." in refused.stderr
    platform = (
        "from vllm.platforms import current_platform as p\n"
        "print(type(p).__name__, p.ray_device_key or '-', p.get_device_communicator_cls())\n"
    )
    with_plugin = lab.node("spark-1", "docker", "exec", "vllm-cluster-ray-head", "python3", "-c", platform)
    assert with_plugin.stdout.split()[-3:] == [
        "LabCpuRayPlatform", "GPU", "inferops_lab_vllm_platform.communicator.HostLocalShmCpuCommunicator"]
    without = lab.node("spark-1", "docker", "exec", "-e", "VLLM_PLUGINS=", "vllm-cluster-ray-head", "python3", "-c", platform)
    assert without.stdout.split()[-3:][:2] == ["CpuPlatform", "-"]
