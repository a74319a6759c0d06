# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether a running vLLM server really answers: its endpoint, read from its own command line,
then /health and one completion within one deadline. Backend-neutral (the Ray driver and
vLLM's own launcher alike); the HTTP calls are injected so the verdicts are unit-tested.
Private to the collection.
"""

from __future__ import annotations

import json
import re
import time
import typing as t
import urllib.error

from ansible.module_utils.urls import open_url

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._regular_file import regular_file

# docs/troubleshooting.md quotes them and a test keeps both in step.
MESSAGES: dict[str, str] = {
    "F20_ANSWER": (
        "[F20] {host}: vLLM at {url} did not return a completion for {model} within {timeout} s ({detail}), "
        "although {alive}. A rank that hangs in a collective looks like this; so does a model "
        "still loading. Fix: read `docker logs {container}` on {host}; restart vLLM's ranks together "
        "(site.yml --tags vllm -e vllm_cluster_restart=true). See {doc}#f20"
    ),
    # The vllm_server role's proof that the server it started answers as deployed (prove_api).
    "MODELS": (
        "{host}: vLLM at {url}/v1/models does not list {model} (HTTP {status}; listed: {listed}). Fix: read "
        "`docker logs {container}` on {host}; check vllm_server_served_model_name and vllm_server_model."
    ),
    "KEY_REFUSED": (
        "{host}: vLLM at {url}/v1/models refused the API key this node holds (HTTP 401): {container} runs with "
        "another key than its key file. Fix: run site.yml --tags vllm, which writes the key file from "
        "vllm_server_api_key and restarts vLLM with it."
    ),
    "KEY_UNEXPECTED": (
        "{host}: vLLM at {url}/v1/models asks for an API key (HTTP 401) although this node holds none: {container} "
        "runs with a key vllm_server_api_key no longer sets. Fix: run site.yml --tags vllm, which restarts vLLM as "
        "the inventory says."
    ),
    "KEY_MISSING": (
        "{host}: vllm_server_api_key is set, but {path} holds no key (missing, empty, or not a regular file): the "
        "check cannot tell whether the API is open. Fix: run site.yml --tags vllm, which writes the key file and "
        "restarts vLLM with it."
    ),
    "KEYLESS_ODD": (
        "{host}: vLLM at {url}/v1/models answered a request without the API key with HTTP {status}, where it must "
        "refuse it (401). Fix: read `docker logs {container}` on {host}."
    ),
    "KEYLESS": (
        "{host}: vLLM answered {url}/v1/models without the API key (HTTP {status}): its API is open to whoever "
        "reaches the port although vllm_server_api_key is set. Fix: read `docker logs {container}` and check that "
        "the image's vLLM honours VLLM_API_KEY; stop it (playbooks/stop.yml) until it does."
    ),
    "SMOKE": (
        "{host}: vLLM at {url} returned no tokens for one chat completion of {model} ({detail}). Fix: read "
        "`docker logs {container}` on {host}."
    ),
    "NO_API_KEY": (
        "WARNING {host}: vLLM's API at {url} has NO API key (vllm_server_api_key is empty). Anyone who reaches the port "
        "can use the model and see every request it serves. Fix: set vllm_server_api_key (keep it in Vault)."
    ),
    "REQUEST_INVALID": (
        "{host}: vllm_server_model={model}, tensor_parallel_size={tp}, pipeline_parallel_size={pp}, port={port}: "
        "expected a model id or path, parallel sizes >= 1 and a port in 1-65535. Fix: set them in group_vars (the model "
        "as a Hugging Face id, or a path inside the container)."
    ),
    "DID_NOT_COME_UP": (
        "{host}: vLLM did not come up at {url} ({why}). {hint} vLLM's error: {errors}. Last lines of `docker logs "
        "{container}`: {log}"
    ),
    "SERVES": "vLLM serves {name} at {url}/v1 (smoke completion: {tokens} tokens)",
}

# Where clients reach the server when it binds every address.
WILDCARDS = {"", "0.0.0.0", "::", "[::]"}


def endpoint_from_args(args: t.Sequence[str]) -> tuple[str, str]:
    """(base URL, served model name) from a vLLM server's command line (`--flag value` or `--flag=value`)."""
    values: dict[str, str] = {}
    args = list(args)
    for index, arg in enumerate(args):
        if not arg.startswith("--"):
            continue
        flag, eq, inline = arg.partition("=")
        if eq:
            values[flag] = inline
        elif index + 1 < len(args) and not args[index + 1].startswith("--"):
            values[flag] = args[index + 1]
    host = values.get("--host", "")
    host = "127.0.0.1" if host in WILDCARDS else host
    port = values.get("--port", "8000")
    model = values.get("--served-model-name") or values.get("--model") or ""
    if not model:
        # `vllm serve MODEL ...`: the model is the first positional argument after `serve`
        if "serve" in args and args.index("serve") + 1 < len(args):
            model = args[args.index("serve") + 1]
    host = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{host}:{port}", model


def http_call(url: str, body: dict | None, key: str, timeout: float) -> tuple[int, str]:
    """One request; (status, text). Status 0 means no HTTP answer at all (refused, reset, timed out)."""
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = json.dumps(body).encode() if body is not None else None
    try:
        with open_url(url, data=data, headers=headers, method="POST" if data else "GET", timeout=timeout,
                      use_proxy=False) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")
    except (OSError, ValueError) as exc:
        return 0, f"{type(exc).__name__}: {exc}"


def check_answers(
    url: str,
    model: str,
    key: str,
    timeout: float,
    call: t.Callable[[str, dict | None, str, float], tuple[int, str]] = http_call,
    clock: t.Callable[[], float] = time.monotonic,
    sleep: t.Callable[[float], None] = time.sleep,
) -> dict[str, t.Any]:
    """Wait (within timeout) for /health 200, then ask one short completion; the outcome as a dict.

    status: "ok" (tokens came back), or "failed" with detail saying which step did not answer.
    """
    started = clock()

    def left() -> float:
        return timeout - (clock() - started)

    health, text = 0, ""
    while True:
        health, text = call(f"{url}/health", None, key, max(1.0, min(10.0, left())))
        if health == 200 or left() <= 0:
            break
        sleep(min(2.0, max(0.0, left())))
    if health != 200:
        return {"status": "failed", "url": url, "model": model, "waited": round(clock() - started, 1),
                "detail": f"/health answered {health or 'nothing'}: {text[:200]}"}
    body = {"model": model, "prompt": "Hello", "max_tokens": 4, "temperature": 0}
    status, text = call(f"{url}/v1/completions", body, key, max(1.0, left()))
    tokens = 0
    if status == 200:
        try:
            tokens = int(json.loads(text).get("usage", {}).get("completion_tokens") or 0)
        except (ValueError, AttributeError):
            tokens = 0
    result = {"url": url, "model": model, "waited": round(clock() - started, 1), "completion_tokens": tokens}
    if status == 200 and tokens > 0:
        return dict(result, status="ok", detail="answered")
    detail = f"/v1/completions answered {status or 'nothing'}: {text[:200]}" if status != 200 else "no tokens came back"
    return dict(result, status="failed", detail=detail)


def _listed_models(text: str) -> list[str]:
    try:
        return [str(entry.get("id")) for entry in json.loads(text).get("data") or [] if isinstance(entry, dict)]
    except (ValueError, AttributeError):
        return []


def _completion_tokens(text: str) -> int:
    try:
        return int((json.loads(text).get("usage") or {}).get("completion_tokens") or 0)
    except (ValueError, AttributeError, TypeError):
        return 0


def prove_api(url: str, model: str, key: str, prompt: str, max_tokens: int, host: str, container: str,
              call: t.Callable[[str, dict | None, str, float], tuple[int, str]] = http_call) -> dict[str, t.Any]:
    """What a healthy server must also do, in one call on the node: list the served model, refuse a request
    without the key (when one is set) and return tokens for one chat completion. The outcome as a dict; `problem`
    is the first thing it did not do, as the operator reads it ('' when none)."""
    names = {"host": host, "url": url, "model": model, "container": container}
    outcome: dict[str, t.Any] = {"url": url, "model": model, "models": [], "keyless_status": None,
                                 "completion_tokens": 0, "problem": ""}
    status, text = call(f"{url}/v1/models", None, key, 30)
    outcome["models"] = _listed_models(text) if status == 200 else []
    if status == 401:
        return dict(outcome, problem=MESSAGES["KEY_REFUSED" if key else "KEY_UNEXPECTED"].format(**names))
    if model not in outcome["models"]:
        return dict(outcome, problem=MESSAGES["MODELS"].format(
            status=status or "nothing", listed=", ".join(outcome["models"]) or "none", **names))
    if key:
        keyless, _text = call(f"{url}/v1/models", None, "", 30)
        outcome["keyless_status"] = keyless
        if 200 <= keyless < 300:
            return dict(outcome, problem=MESSAGES["KEYLESS"].format(status=keyless, **names))
        if keyless != 401:
            return dict(outcome, problem=MESSAGES["KEYLESS_ODD"].format(status=keyless or "nothing", **names))
    body = {"model": model, "messages": [{"role": "user", "content": prompt}], "max_tokens": int(max_tokens)}
    status, text = call(f"{url}/v1/chat/completions", body, key, 120)
    outcome["completion_tokens"] = _completion_tokens(text) if status == 200 else 0
    if outcome["completion_tokens"] < 1:
        detail = f"HTTP {status or 'nothing'}: {text[:200]}" if status != 200 else "no tokens came back"
        return dict(outcome, problem=MESSAGES["SMOKE"].format(detail=detail, **names))
    return outcome


def read_key(path: str) -> str:
    """The API key from its root-only file; '' when no file is named, it is absent (no key wanted) or it is not a
    regular file (a link planted at the path is not followed: its target is not sent as a key)."""
    if not path:
        return ""
    with regular_file(path) as handle:
        return "" if handle is None else handle.read(64 * 1024).decode("utf-8", errors="replace").strip()


def check_container_answers(args: t.Sequence[str], key_file: str, timeout: float, **waits: t.Any) -> dict[str, t.Any]:
    """check_answers for the server a container runs: its endpoint and model from the container's command line
    (`docker inspect`'s Args), its key from key_file."""
    url, model = endpoint_from_args(args)
    return check_answers(url, model, read_key(key_file), timeout, **waits)


def answer_message(host: str, container: str, outcome: t.Mapping[str, t.Any], timeout: int,
                   alive: str = "Ray shows its ranks alive") -> str:
    """F20 for a server that runs but does not answer; `alive` says what showed its ranks alive."""
    return MESSAGES["F20_ANSWER"].format(
        doc=TROUBLESHOOTING, host=host, url=outcome.get("url", "?"), model=outcome.get("model", "?"),
        timeout=timeout, detail=outcome.get("detail", ""), container=container, alive=alive,
    )


# An exception line of a Python traceback, once vLLM's log prefix is cut: its logger's ("... ERROR 12-03 17:42:03
# [core.py:700] ") or, on a traceback's own lines, the process tag ("(EngineCore pid=12) ").
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_.]*(Error|Exception): ")
_LOG_PREFIX = re.compile(r"^.*\] ")
_PROCESS_TAG = re.compile(r"^\([^)]*\)\s*")


def startup_errors(lines: t.Sequence[str]) -> list[str]:
    """The exception lines of a vLLM log that did not come up (root cause first, as Python prints causes first),
    without vLLM's log prefixes, each once."""
    errors: list[str] = []
    for line in lines or []:
        text = str(line)
        text = _LOG_PREFIX.sub("", text, count=1) if _LOG_PREFIX.match(text) else _PROCESS_TAG.sub("", text, count=1)
        text = text.strip()
        if _EXCEPTION_LINE.match(text) and text not in errors:
            errors.append(text)
    return errors


def startup_hint(model: str, lines: t.Sequence[str]) -> str:
    """A hint for the operator when the log shows a known first-run mistake; '' otherwise."""
    if str(model).startswith("/") and any("HFValidationError" in str(line) for line in lines or []):
        return (f"Hint: {model} looks like a path but does not exist inside the container; mount it with "
                "vllm_server_volumes or fix vllm_server_model.")
    return ""
