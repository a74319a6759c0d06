"""The module end to end through AnsibleModule, the HTTP calls replaced by a scripted server: the key comes from its
file and never reaches the output, and a key wanted but missing fails before anything is asked."""

from __future__ import annotations

import json
import os

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _vllm_serving
from ansible_collections.inferops.vllm_cluster.plugins.modules import vllm_api_check

KEY = "sk-probe-4f1c9e"


def run(monkeypatch, capsys, key_file, answer):
    asked = []

    def call(url, body, key, timeout):
        asked.append((url.rsplit("/", 1)[-1], key))
        return answer(url, key)

    monkeypatch.setattr(_vllm_serving, "http_call", call)
    monkeypatch.setattr(vllm_api_check, "prove_api",
                        lambda *args: _vllm_serving.prove_api(*args, call=call))
    args = {"url": "http://198.18.0.180:8000/", "model": "tiny", "api_key_file": str(key_file), "host": "spark-1",
            "container": "vllm-cluster-vllm"}
    with patch_module_args(args), pytest.raises(SystemExit):
        vllm_api_check.main()
    return json.loads(capsys.readouterr().out), asked


def serving(url, key):
    if url.endswith("/chat/completions"):
        return 200, json.dumps({"usage": {"completion_tokens": 8}})
    return (200, json.dumps({"data": [{"id": "tiny"}]})) if key == KEY else (401, "Unauthorized")


def test_a_server_as_deployed_passes_with_the_key_from_its_file(monkeypatch, capsys, tmp_path):
    key_file = tmp_path / "vllm_api_key"
    key_file.write_text(KEY + "\n")
    result, asked = run(monkeypatch, capsys, key_file, serving)
    assert not result.get("failed"), result
    assert result["api"]["keyless_status"] == 401 and result["api"]["completion_tokens"] == 8
    assert asked == [("models", KEY), ("models", ""), ("completions", KEY)]
    assert KEY not in json.dumps(result)


def test_a_key_the_server_echoes_back_is_masked_in_the_failure(monkeypatch, capsys, tmp_path):
    key_file = tmp_path / "vllm_api_key"
    key_file.write_text(KEY)

    def echoing(url, key):
        if url.endswith("/chat/completions"):
            return 500, f"bad request with Authorization: Bearer {key}"
        return serving(url, key)

    result, _asked = run(monkeypatch, capsys, key_file, echoing)
    assert result["failed"] and "returned no tokens" in result["msg"]
    assert KEY not in json.dumps(result), "the key reached the module's output"


@pytest.mark.parametrize("content", [None, "", "   \n", "link"])
def test_a_key_wanted_but_not_in_its_file_fails_before_asking(monkeypatch, capsys, tmp_path, content):
    key_file = tmp_path / "vllm_api_key"
    if content == "link":
        target = tmp_path / "elsewhere"
        target.write_text(KEY)
        os.symlink(target, key_file)
    elif content is not None:
        key_file.write_text(content)
    result, asked = run(monkeypatch, capsys, key_file, serving)
    assert result["failed"] and asked == []
    assert result["msg"].startswith(f"spark-1: vllm_server_api_key is set, but {key_file} holds no key")
