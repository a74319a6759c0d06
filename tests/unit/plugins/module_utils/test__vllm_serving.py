"""The vLLM server's endpoint from its command line, and the verdict of /health plus one completion."""

from __future__ import annotations

import json

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._vllm_serving import (
    answer_message,
    check_answers,
    check_container_answers,
    endpoint_from_args,
    prove_api,
    startup_errors,
    startup_hint,
)

LAUNCHER = ["-c", "exec python3 \"$@\"", "vllm-server", "-m", "vllm.entrypoints.openai.api_server"]


@pytest.mark.parametrize(
    "args, endpoint",
    [
        (LAUNCHER + ["--model", "/models/tiny", "--served-model-name", "tiny", "--host", "198.18.0.180", "--port", "8000"],
         ("http://198.18.0.180:8000", "tiny")),
        (LAUNCHER + ["--model=Qwen/Qwen3", "--host=0.0.0.0", "--port=9000"], ("http://127.0.0.1:9000", "Qwen/Qwen3")),
        (["serve", "Qwen/Qwen3", "--tensor-parallel-size", "2"], ("http://127.0.0.1:8000", "Qwen/Qwen3")),
        (LAUNCHER + ["--model", "m", "--host", "fd00::1", "--enforce-eager", "--port", "8001"], ("http://[fd00::1]:8001", "m")),
        (LAUNCHER + ["--enforce-eager", "--model", "m"], ("http://127.0.0.1:8000", "m")),
    ],
)
def test_endpoint_from_args(args, endpoint):
    assert endpoint_from_args(args) == endpoint


class Server:
    """A scripted vLLM: /health answers from a list (the last answer repeats), completions from one answer."""

    def __init__(self, health, completion=(200, {"usage": {"completion_tokens": 4}})):
        self.health = list(health)
        self.completion = completion
        self.calls = []
        self.now = 0.0

    def call(self, url, body, key, timeout):
        self.calls.append((url.rsplit("/", 1)[-1], key))
        self.now += 1
        if url.endswith("/health"):
            return self.health.pop(0) if len(self.health) > 1 else self.health[0]
        status, payload = self.completion
        return status, json.dumps(payload) if isinstance(payload, dict) else payload

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


@pytest.mark.parametrize(
    "case, health, completion, status, detail",
    [
        ("answers", [(200, "")], (200, {"usage": {"completion_tokens": 4}}), "ok", "answered"),
        ("loads, then answers", [(0, "ConnectionRefusedError"), (503, ""), (200, "")],
         (200, {"usage": {"completion_tokens": 1}}), "ok", "answered"),
        ("never healthy", [(0, "ConnectionRefusedError: [Errno 111]")], None, "failed", "/health answered nothing"),
        ("health 500", [(500, "engine dead")], None, "failed", "/health answered 500: engine dead"),
        ("completion fails", [(200, "")], (500, "EngineDeadError"), "failed", "/v1/completions answered 500: EngineDeadError"),
        ("completion times out", [(200, "")], (0, "TimeoutError: timed out"), "failed", "answered nothing: TimeoutError"),
        ("no tokens", [(200, "")], (200, {"usage": {"completion_tokens": 0}}), "failed", "no tokens came back"),
    ],
)
def test_check_answers(case, health, completion, status, detail):
    server = Server(health, completion or (200, {}))
    outcome = check_answers("http://h:8000", "tiny", "k", 30, call=server.call, clock=server.clock, sleep=server.sleep)
    assert outcome["status"] == status, case
    assert detail in outcome["detail"], case
    assert all(key == "k" for _path, key in server.calls)
    assert server.now <= 30 + 12, "one deadline for the whole check"


@pytest.mark.parametrize("key_file_content, key", [("k-123\n", "k-123"), (None, "")])
def test_a_containers_server_is_asked_at_its_own_endpoint_with_the_key_from_its_file(tmp_path, key_file_content, key):
    key_file = tmp_path / "vllm_api_key"
    if key_file_content is not None:
        key_file.write_text(key_file_content)
    server = Server([(200, "")], (200, {"usage": {"completion_tokens": 2}}))
    seen = []

    def call(url, body, given, timeout):
        seen.append((url, (body or {}).get("model"), given))
        return server.call(url, body, given, timeout)

    args = LAUNCHER + ["--model", "/models/tiny-llama", "--served-model-name", "tiny", "--host", "0.0.0.0", "--port", "8001"]
    outcome = check_container_answers(args, str(key_file), 30, call=call, clock=server.clock, sleep=server.sleep)
    assert outcome["status"] == "ok"
    assert seen == [("http://127.0.0.1:8001/health", None, key), ("http://127.0.0.1:8001/v1/completions", "tiny", key)]


def test_failure_message_names_host_url_model_bound_and_fix():
    outcome = {"url": "http://198.18.0.180:8000", "model": "tiny", "detail": "/health answered nothing"}
    message = answer_message("spark-1", "vllm-cluster-vllm", outcome, 60)
    for needle in ("[F20] spark-1", "http://198.18.0.180:8000", "tiny", "within 60 s", "/health answered nothing",
                   "docker logs vllm-cluster-vllm", "--tags vllm -e vllm_cluster_restart=true", "#f20"):
        assert needle in message


# What `docker logs` of a vLLM that did not come up holds (shortened from the lab's wrong-model-path run).
LOG = [
    "INFO 12-03 17:42:01 [api_server.py:1234] vLLM API server version 0.32.0",
    "(APIServer pid=1) Traceback (most recent call last):",
    "(APIServer pid=1)   File \"/usr/lib/python3/dist-packages/huggingface_hub/utils/_validators.py\", line 106, in _inner_fn",
    "(APIServer pid=1) huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or 'namespace/repo_name': '/models/nope'.",
    "(APIServer pid=1) ERROR 12-03 17:42:03 [core.py:700] ValueError: current platform cpu does not support ray.",
    "(APIServer pid=1) ERROR 12-03 17:42:03 [core.py:700] ValueError: current platform cpu does not support ray.",
    "RuntimeError: Engine core initialization failed. See root cause above.",
]


def test_startup_errors_root_cause_first_each_once_without_prefixes():
    assert startup_errors(LOG) == [
        "huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or 'namespace/repo_name': '/models/nope'.",
        "ValueError: current platform cpu does not support ray.",
        "RuntimeError: Engine core initialization failed. See root cause above.",
    ]
    assert startup_errors(["INFO all fine", "(pid=3) Traceback (most recent call last):"]) == []


@pytest.mark.parametrize(
    "case, model, lines, hint",
    [
        ("a path that is not in the container", "/models/nope", LOG, "Hint: /models/nope looks like a path but does not exist"),
        ("a hub id with the same error", "org/nope", LOG, ""),
        ("a path, another error", "/models/x", LOG[-1:], ""),
    ],
)
def test_startup_hint(case, model, lines, hint):
    found = startup_hint(model, lines)
    assert (found == "") if not hint else found.startswith(hint), (case, found)


class Api:
    """A scripted vLLM API: /v1/models (with and without the key) and one chat completion, each one answer."""

    def __init__(self, models=(200, {"data": [{"id": "tiny"}]}), keyless=(401, "Unauthorized"),
                 chat=(200, {"usage": {"completion_tokens": 8}})):
        self.answers = {"models": models, "keyless": keyless, "chat": chat}
        self.calls = []

    def call(self, url, body, key, timeout):
        path = url.split(":8000", 1)[1]
        # a second /v1/models is the one asked without the key
        again = any(asked == "models" for asked, *_rest in self.calls)
        asked = "chat" if path == "/v1/chat/completions" else ("keyless" if again else "models")
        self.calls.append((asked, key, (body or {}).get("messages"), (body or {}).get("max_tokens")))
        status, payload = self.answers[asked]
        return status, json.dumps(payload) if isinstance(payload, dict) else payload


@pytest.mark.parametrize(
    "case, api, key, asked, problem",
    [
        ("serves as deployed", Api(), "k", ["models", "keyless", "chat"], ""),
        ("no key set: nothing asked without one", Api(), "", ["models", "chat"], ""),
        ("another model listed", Api(models=(200, {"data": [{"id": "other"}]})), "k", ["models"],
         "h1: vLLM at http://h:8000/v1/models does not list tiny (HTTP 200; listed: other)"),
        ("models refused", Api(models=(500, "boom")), "k", ["models"], "(HTTP 500; listed: none)"),
        ("the key refused", Api(models=(401, "Unauthorized")), "k", ["models"],
         "h1: vLLM at http://h:8000/v1/models refused the API key this node holds (HTTP 401)"),
        ("a key asked for where none is held", Api(models=(401, "Unauthorized")), "", ["models"],
         "h1: vLLM at http://h:8000/v1/models asks for an API key (HTTP 401) although this node holds none"),
        ("keyless refused oddly", Api(keyless=(403, "Forbidden")), "k", ["models", "keyless"],
         "answered a request without the API key with HTTP 403, where it must refuse it (401)"),
        ("keyless unanswered", Api(keyless=(0, "ConnectionResetError")), "k", ["models", "keyless"],
         "without the API key with HTTP nothing"),
        ("keyless 500", Api(keyless=(500, "boom")), "k", ["models", "keyless"], "with HTTP 500, where it must"),
        ("models unreachable", Api(models=(0, "ConnectionRefusedError")), "k", ["models"], "(HTTP nothing; listed: none)"),
        ("answers without the key", Api(keyless=(200, {"data": []})), "k", ["models", "keyless"],
         "h1: vLLM answered http://h:8000/v1/models without the API key (HTTP 200)"),
        ("no tokens", Api(chat=(200, {"usage": {"completion_tokens": 0}})), "k", ["models", "keyless", "chat"],
         "returned no tokens for one chat completion of tiny (no tokens came back)"),
        ("completion fails", Api(chat=(500, "EngineDeadError")), "k", ["models", "keyless", "chat"],
         "(HTTP 500: EngineDeadError)"),
        ("completion not JSON", Api(chat=(200, "<html>")), "k", ["models", "keyless", "chat"], "no tokens came back"),
    ],
)
def test_prove_api(case, api, key, asked, problem):
    outcome = prove_api("http://h:8000", "tiny", key, "Say hello.", 8, "h1", "vllm-cluster-vllm", call=api.call)
    assert [call[0] for call in api.calls] == asked, case
    if problem:
        assert problem in outcome["problem"], (case, outcome["problem"])
        assert "vllm-cluster-vllm" in outcome["problem"] and "Fix:" in outcome["problem"]
    else:
        assert outcome["problem"] == "" and outcome["completion_tokens"] == 8, case
    # the key goes with every request but the one that must be refused, and the completion is the operator's prompt
    assert [call_key for _what, call_key, _m, _t in api.calls] == [("" if what == "keyless" else key) for what in asked]
    assert all(m == [{"role": "user", "content": "Say hello."}] and t == 8
               for what, _k, m, t in api.calls if what == "chat")
