"""vLLM on the lab: a wrong model path fails fast with vLLM's own words, and the server comes back."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest
import yaml

from conftest import LAB_INVENTORY, PRELAUNCH_CHECK, task_outcome

HEAD_URL = "http://198.18.0.180:8000"


def api_key() -> str:
    return yaml.safe_load((LAB_INVENTORY / "group_vars" / "all" / "cluster.yml").read_text())["vllm_server_api_key"]


def get_models(key: str | None) -> tuple[int, dict]:
    request = urllib.request.Request(f"{HEAD_URL}/v1/models", headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, {}


@pytest.mark.restarts_layers
def test_wrong_model_path_fails_within_bound_with_vllms_error(lab, tmp_path):
    started = time.monotonic()
    result = lab.playbook(tmp_path, "--tags", "vllm", "-e", "vllm_server_model=/models/does-not-exist")
    elapsed = time.monotonic() - started
    output = result.stdout + result.stderr
    assert result.returncode != 0
    # vLLM's own error line, from the server's log, and our hint on top of it
    assert "HFValidationError: Repo id must be in the form" in output, output[-3000:]
    assert "/models/does-not-exist looks like a path but does not exist inside the container" in output
    # The health wait ends when the server exits, far inside vllm_server_health_timeout (300 s in the lab).
    assert elapsed < 240, f"took {elapsed:.0f} s"

    restored = lab.playbook(tmp_path, "--tags", "vllm")
    assert restored.returncode == 0, (restored.stdout + restored.stderr)[-3000:]
    # nothing validated the cluster in a --tags vllm run: vLLM's own pre-launch check did
    assert task_outcome(restored.stdout, PRELAUNCH_CHECK, "spark-1") == "ok"
    status, models = get_models(api_key())
    assert status == 200 and [m["id"] for m in models["data"]] == ["tiny-llama"]
    assert get_models(None)[0] == 401
    assert get_models("wrong")[0] == 401
