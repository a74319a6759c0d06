"""What the collection shows of a container never shows a secret."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._secrets import mask_argv, mask_env, mask_text


@pytest.mark.parametrize(
    "case, entry, shown",
    [
        ("API key", "VLLM_API_KEY=sk-123", "VLLM_API_KEY=****"),
        ("HF token", "HF_TOKEN=hf_abc", "HF_TOKEN=****"),
        ("lower case", "db_password=x", "db_password=****"),
        ("credentials", "AWS_CREDENTIALS=x", "AWS_CREDENTIALS=****"),
        ("proxy with a password", "HTTPS_PROXY=http://alice:s3cret@proxy.example:3128",
         "HTTPS_PROXY=http://alice:****@proxy.example:3128"),
        ("proxy without one", "HTTPS_PROXY=http://proxy.example:3128", "HTTPS_PROXY=http://proxy.example:3128"),
        ("a path to a token is no token", "RAY_AUTH_TOKEN_PATH=/etc/inferops-vllm-cluster/ray_auth_token",
         "RAY_AUTH_TOKEN_PATH=/etc/inferops-vllm-cluster/ray_auth_token"),
        ("pinning", "VLLM_HOST_IP=192.168.200.12", "VLLM_HOST_IP=192.168.200.12"),
        ("an = in a secret", "X_SECRET=a=b", "X_SECRET=****"),
        ("no value", "PATH", "PATH"),
    ],
)
def test_mask_env(case, entry, shown):
    assert mask_env([entry]) == [shown], case


@pytest.mark.parametrize(
    "case, argv, shown",
    [
        ("--api-key X", ["--model", "m", "--api-key", "sk-1"], ["--model", "m", "--api-key", "****"]),
        ("--hf-token=X", ["--hf-token=hf_1"], ["--hf-token=****"]),
        ("--api-key last, no value", ["--api-key"], ["--api-key"]),
        ("a URL with a password", ["--download-url", "https://u:p@host/x"], ["--download-url", "https://u:****@host/x"]),
        ("nothing secret", ["-m", "vllm.entrypoints.openai.api_server", "--port", "8000"],
         ["-m", "vllm.entrypoints.openai.api_server", "--port", "8000"]),
    ],
)
def test_mask_argv(case, argv, shown):
    assert mask_argv(argv) == shown, case


def test_mask_text():
    assert mask_text("failed: proxy http://bob:pw@p:3128 refused") == "failed: proxy http://bob:****@p:3128 refused"
    assert mask_env(None) == [] and mask_argv(None) == []
