"""The cluster's Ray token never changes as a side effect (F21), rotates only when asked, and the
containers always equal the rendered configuration: what is removed from it leaves them too."""

from __future__ import annotations

import json

import pytest
from conftest import REPO

CONTROLLER_TOKEN = REPO / "inventories" / "lab" / "credentials" / "ray_auth_token"
NODE_TOKEN = "/etc/inferops-vllm-cluster/ray_auth_token"
CONTAINERS = {"spark-1": ["vllm-cluster-ray-head", "vllm-cluster-vllm"], "spark-2": ["vllm-cluster-ray-worker"]}


def node_token(lab, host) -> str:
    return lab.node(host, "cat", NODE_TOKEN).stdout.strip()


def container_envs(lab) -> dict[str, dict[str, str]]:
    envs = {}
    for host, names in CONTAINERS.items():
        for name in names:
            config = json.loads(lab.node(host, "docker", "inspect", "--format", "{{json .Config.Env}}", name).stdout)
            envs[name] = dict(line.split("=", 1) for line in config)
    return envs


def token_files(lab) -> dict[str, str]:
    """Each node's token file as stat sees it: checksum, mode, owner, modification time (a rewrite shows)."""
    return {host: lab.node(host, "stat", "-c", "%a %U %Y", NODE_TOKEN).stdout.strip() + " "
            + lab.node(host, "sha1sum", NODE_TOKEN).stdout.split()[0] for host in CONTAINERS}


@pytest.mark.readonly
def test_a_second_copy_of_the_inventory_takes_the_heads_token(lab, tmp_path, unchanged):
    # the lab's inventory in another directory, without its credentials: a teammate's clone, CI. One layer that
    # decides the token is enough (in a whole site.yml preflight decides it first; both call _common's ray_token):
    # docker_runtime, which also places the token on the nodes, and must leave it as it is.
    before = token_files(lab)
    result = lab.playbook(tmp_path, "--tags", "docker_runtime", hosts=lab.hosts)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert "this controller had none; it takes the one on the head" in output
    copied = tmp_path / "inventory" / "credentials" / "ray_auth_token"
    assert copied.read_text().strip() == node_token(lab, "spark-1") == node_token(lab, "spark-2")
    assert copied.stat().st_mode & 0o777 == 0o600
    assert token_files(lab) == before


@pytest.mark.readonly
@pytest.mark.parametrize("limit", [[], ["--limit", "spark-2"]], ids=["all", "limit-worker"])
def test_another_token_is_refused_before_anything_changes(lab, tmp_path, unchanged, limit):
    before = node_token(lab, "spark-1")
    credentials = tmp_path / "inventory" / "credentials"
    credentials.mkdir(parents=True)
    (credentials / "ray_auth_token").write_text("0" * 64)
    result = lab.playbook(tmp_path, *limit, hosts=lab.hosts)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-3000:]
    for text in ("[F21] spark-1: the cluster's Ray token (/etc/inferops-vllm-cluster/ray_auth_token on the head)",
                 f"differs from the controller's ({credentials / 'ray_auth_token'})", "nothing was changed",
                 "vllm_cluster_ray_auth_rotate=true"):
        assert text in output, output[-3000:]
    assert "0" * 64 not in output and before not in output
    assert node_token(lab, "spark-1") == node_token(lab, "spark-2") == before


@pytest.mark.restarts_layers
def test_settings_removed_leave_the_containers_and_a_rotation_replaces_the_token_everywhere(lab, tmp_path):
    """Ray auth off and an extra variable added, then auth on again with the variable gone and the token rotated:
    both ways converge and the containers equal the rendered configuration. (Two converges, each restarting every
    layer: one test, so that the suite pays for them once. What it leaves to the unit table of token_plan: auth
    turned on again without a rotation keeps the controller's token; a rotation of a cluster whose head holds one.)"""
    old_token = CONTROLLER_TOKEN.read_text().strip()
    off = lab.playbook(tmp_path, "-e", "vllm_cluster_ray_auth=off", "-e", '{"vllm_cluster_extra_env": {"INFEROPS_PROBE": "1"}}')
    assert off.returncode == 0, (off.stdout + off.stderr)[-3000:]
    for name, env in container_envs(lab).items():
        assert "RAY_AUTH_MODE" not in env and "RAY_AUTH_TOKEN_PATH" not in env, name
        assert env.get("INFEROPS_PROBE") == "1", name
    assert lab.node("spark-2", "test", "-e", NODE_TOKEN, check=False).returncode != 0
    # turning auth off is no rotation: the nodes' copies go, the controller keeps the cluster's token, which the
    # next run with auth on places again (token_plan's "auth turned on" row in the unit tests)
    assert lab.node("spark-1", "test", "-e", NODE_TOKEN, check=False).returncode != 0
    assert CONTROLLER_TOKEN.read_text().strip() == old_token

    on = lab.playbook(tmp_path, "-e", "vllm_cluster_ray_auth_rotate=true")
    output = on.stdout + on.stderr
    assert on.returncode == 0, output[-3000:]
    for name, env in container_envs(lab).items():
        assert env.get("RAY_AUTH_MODE") == "token", name
        assert "INFEROPS_PROBE" not in env, name
    new_token = CONTROLLER_TOKEN.read_text().strip()
    assert new_token != old_token and len(new_token) == 64
    assert node_token(lab, "spark-1") == node_token(lab, "spark-2") == new_token
    # every container started on the new token's file (the label is its fingerprint: sha256, 16 digits);
    # validate and vLLM's smoke completion ran on it
    for host, names in CONTAINERS.items():
        fingerprint = lab.node(host, "sha256sum", NODE_TOKEN).stdout.split()[0][:16]
        for name in names:
            label = lab.node(host, "docker", "inspect", "--format",
                             '{{ index .Config.Labels "inferops.vllm_cluster.ray-token-sha256" }}', name).stdout.strip()
            assert label == fingerprint, (host, name, label, fingerprint)
    assert "vLLM serves tiny-llama" in output
    assert old_token not in output and new_token not in output
