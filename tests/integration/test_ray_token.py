"""The cluster's Ray token never changes as a side effect (F21), rotates only when asked, and the
containers always equal the rendered configuration: what is removed from it leaves them too. The two converges
that prove it also prove that no secret reaches any output, even at -vvv --diff."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest

from conftest import REPO, api_key, lab_settings

CONTROLLER_TOKEN = REPO / "inventories" / "lab" / "credentials" / "ray_auth_token"
NODE_TOKEN = "/etc/inferops-vllm-cluster/ray_auth_token"
READ_HUB_TOKEN = "from huggingface_hub import get_token; print(get_token())"
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


def leaked(output: str, secrets: list[str]) -> list[str]:
    """The secrets that appear in the output as they are, as the sha256 or sha1 of their text (a digest in a log lets a
    guess be checked offline; node_state describes files by their sha256), or base64-encoded (as slurp returns a file)."""
    forms = {}
    for secret in secrets:
        for form in (secret, hashlib.sha256(secret.encode()).hexdigest(), hashlib.sha1(secret.encode()).hexdigest(),
                     base64.b64encode(secret.encode()).decode(), base64.b64encode((secret + "\n").encode()).decode()):
            forms[form] = secret
    return sorted({secret for form, secret in forms.items() if form in output})


@pytest.mark.readonly
def test_a_second_copy_of_the_inventory_takes_the_heads_token(lab, tmp_path, unchanged):
    # the lab's inventory in another directory, without its credentials: a teammate's clone, CI. One layer that
    # decides the token is enough (in a whole site.yml preflight decides it first; both call _common's ray_token):
    # docker_runtime, which also places the token on the nodes, and must leave it as it is.
    # At -vvv: the everyday path (auth on, the head's token read, kept and placed where a node lacks it), where the
    # token passes through a task's result (slurp's base64) on its way to the controller.
    before = token_files(lab)
    result = lab.playbook(tmp_path, "-vvv", "--tags", "docker_runtime", hosts=lab.hosts)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert "this controller had none; it takes the one on the head" in output
    assert leaked(output, [node_token(lab, "spark-1"), api_key()]) == []
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
def test_settings_removed_leave_the_containers_and_a_rotation_replaces_the_token_everywhere_printing_no_secret(
        lab, tmp_path):
    """Ray auth off and extra settings added, then auth on again with them gone and the token rotated: both ways
    converge and the containers equal the rendered configuration. Both runs at -vvv --diff, with a secret in every
    setting that takes one (the API key file written again, then read as it stands; a key in vllm_server_env; a proxy
    password in the extra env; the hub token; the supervisors' secret; the old and the new Ray token): none of them,
    nor its sha256, sha1 or base64, is in any output of either run (the second shows the settings' removal). Two
    converges, each restarting every layer: one test for the token, the containers and the secrets, so that the suite
    pays for them once. (The everyday path at -vvv, auth on and the head's token read and kept, is
    test_a_second_copy_of_the_inventory_takes_the_heads_token's. What this leaves to the unit table of token_plan:
    auth turned on again without a rotation keeps the controller's token; a rotation of a cluster whose head holds
    one.)"""
    old_token = CONTROLLER_TOKEN.read_text().strip()
    hub_token, wandb_key, proxy_password = "hf_probe_token_8e2b", "wandb_probe_key_3f9a", "proxy-pw-7c1d"
    off_settings = {
        "vllm_cluster_ray_auth": "off", "vllm_cluster_hf_token": hub_token,
        "vllm_server_env": dict(lab_settings()["vllm_server_env"], WANDB_API_KEY=wandb_key),
        "vllm_cluster_extra_env": {"INFEROPS_PROBE": "1",
                                   "INFEROPS_PROBE_URL": f"http://alice:{proxy_password}@example.invalid:3128"}}
    # the supervisors' secret (written again by each run's supervisor play, root only on each node)
    supervisor_secret = lab.node("spark-2", "cat", "/var/lib/inferops-vllm-cluster/supervisor/secret").stdout.strip()
    assert len(supervisor_secret) == 48
    secrets = [old_token, api_key(), hub_token, wandb_key, proxy_password, supervisor_secret]
    # the API key file gone: the first run writes it again (the secret files' copy runs under no_log)
    lab.node("spark-1", "rm", "/etc/inferops-vllm-cluster/vllm_api_key")
    rotated = False
    try:
        off = lab.playbook(tmp_path, "-vvv", "--diff", "-e", json.dumps(off_settings))
        assert off.returncode == 0, (off.stdout + off.stderr)[-3000:]
        assert leaked(off.stdout + off.stderr, secrets) == []
        assert lab.node("spark-1", "stat", "-c", "%a %U %s",
                        "/etc/inferops-vllm-cluster/vllm_api_key").stdout.split() == ["600", "root", str(len(api_key()))]
        for name, env in container_envs(lab).items():
            assert "RAY_AUTH_MODE" not in env and "RAY_AUTH_TOKEN_PATH" not in env, name
            assert env.get("INFEROPS_PROBE") == "1", name
        # the hub token reaches every container through its root-only file, never through the metadata
        for host, names in CONTAINERS.items():
            for name in names:
                assert lab.node(host, "docker", "exec", name, "python3", "-c", READ_HUB_TOKEN).stdout.strip() == hub_token
                assert hub_token not in lab.node(host, "docker", "inspect", name).stdout
        assert lab.node("spark-2", "stat", "-c", "%a %U", "/etc/inferops-vllm-cluster/hf_token").stdout.split() == [
            "600", "root"]
        assert lab.node("spark-2", "test", "-e", NODE_TOKEN, check=False).returncode != 0
        # turning auth off is no rotation: the nodes' copies go, the controller keeps the cluster's token, which the
        # next run with auth on places again (token_plan's "auth turned on" row in the unit tests)
        assert lab.node("spark-1", "test", "-e", NODE_TOKEN, check=False).returncode != 0
        assert CONTROLLER_TOKEN.read_text().strip() == old_token

        on = lab.playbook(tmp_path, "-vvv", "--diff", "-e", "vllm_cluster_ray_auth_rotate=true")
        output = on.stdout + on.stderr
        assert on.returncode == 0, output[-3000:]
        rotated = True
    finally:
        if not rotated:  # the tests after this one need the lab's own settings (and auth on) back
            lab.playbook(tmp_path)
    new_token = CONTROLLER_TOKEN.read_text().strip()
    assert new_token != old_token and len(new_token) == 64
    assert leaked(output, secrets + [new_token]) == []
    for name, env in container_envs(lab).items():
        assert env.get("RAY_AUTH_MODE") == "token", name
        assert not {"INFEROPS_PROBE", "INFEROPS_PROBE_URL", "WANDB_API_KEY"} & set(env), name
    assert node_token(lab, "spark-1") == node_token(lab, "spark-2") == new_token
    # every container started on the new token's file (the label is its fingerprint: sha256, 16 digits);
    # validate and vLLM's smoke completion ran on it
    for host, names in CONTAINERS.items():
        fingerprint = lab.node(host, "sha256sum", NODE_TOKEN).stdout.split()[0][:16]
        for name in names:
            label = lab.node(host, "docker", "inspect", "--format",
                             '{{ index .Config.Labels "inferops.vllm_cluster.ray-token-sha256" }}', name).stdout.strip()
            assert label == fingerprint, (host, name, label, fingerprint)
            # the hub token gone with its setting
            assert lab.node(host, "docker", "exec", name, "python3", "-c", READ_HUB_TOKEN).stdout.strip() == "None"
    assert "vLLM serves tiny-llama" in output
