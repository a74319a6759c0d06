"""Safe by default: the dashboard and Jobs API closed to other nodes, a Ray client without the token
refused, and the token and API key in no container metadata, no report, no dry run's output. The output of converges
at -vvv --diff is test_ray_token.py's: the two its rotation test runs anyway (each restarting every layer: the suite
pays for them once) and the everyday path's."""

from __future__ import annotations

import copy
import json
import re

import pytest

from conftest import REPO, api_key, flat

HEAD_IC = "198.18.1.12"


def ray_token() -> str:
    return (REPO / "inventories" / "lab" / "credentials" / "ray_auth_token").read_text().strip()


def probe_port(lab, host, address, port) -> str:
    script = (
        "import socket,sys\n"
        "s=socket.socket(); s.settimeout(3)\n"
        "try:\n s.connect((sys.argv[1], int(sys.argv[2]))); print('open')\n"
        "except OSError as e:\n print('closed', type(e).__name__)\n"
    )
    return lab.node(host, "python3", "-c", script, address, str(port)).stdout.strip()


def runtime_image(lab) -> str:
    return lab.node("spark-1", "docker", "inspect", "--format", "{{.Config.Image}}", "vllm-cluster-ray-head").stdout.strip()


@pytest.mark.readonly
def test_dashboard_and_jobs_api_unreachable_from_the_other_node(lab):
    assert probe_port(lab, "spark-2", HEAD_IC, 8265).startswith("closed")
    # on the head itself it does serve (bound to loopback), so the closed port above is the binding, not a dead dashboard
    assert probe_port(lab, "spark-1", "127.0.0.1", 8265) == "open"


def test_ray_client_without_the_token_is_refused(lab):
    image = runtime_image(lab)
    status = ["ray", "status", f"--address={HEAD_IC}:6379"]
    refused = lab.node("spark-2", "docker", "run", "--rm", "--network", "host", image, "timeout", "60", *status, check=False)
    assert refused.returncode != 0
    assert "InvalidAuthToken" in refused.stdout + refused.stderr
    # the same client with the cluster's token file is let in
    admitted = lab.node(
        "spark-2", "docker", "run", "--rm", "--network", "host",
        "-v", "/etc/inferops-vllm-cluster:/etc/inferops-vllm-cluster:ro",
        "-e", "RAY_AUTH_MODE=token", "-e", "RAY_AUTH_TOKEN_PATH=/etc/inferops-vllm-cluster/ray_auth_token",
        image, "timeout", "60", *status, check=False,
    )
    assert admitted.returncode == 0, admitted.stdout[-2000:] + admitted.stderr[-2000:]


@pytest.mark.readonly
def test_secrets_only_in_root_only_files_and_never_in_container_metadata(lab):
    secrets = [ray_token(), api_key()]
    for host in ("spark-1", "spark-2"):
        listing = lab.node(host, "stat", "-c", "%a %U %n", "/etc/inferops-vllm-cluster",
                           *[f"/etc/inferops-vllm-cluster/{f}" for f in lab.node(host, "ls", "/etc/inferops-vllm-cluster").stdout.split()])
        for line in listing.stdout.splitlines():
            mode, owner, path = line.split(" ", 2)
            assert owner == "root" and mode in ("700", "600"), line
        ids = lab.node(host, "docker", "ps", "-aq", "--filter", "label=inferops.vllm_cluster.cluster").stdout.split()
        metadata = lab.node(host, "docker", "inspect", *ids).stdout
        processes = lab.node(host, "ps", "-eo", "args").stdout
        for secret in secrets:
            assert secret not in metadata, f"a secret is in docker inspect on {host}"
            assert secret not in processes, f"a secret is on a command line on {host}"
        env_files = lab.node(host, "sh", "-c", "cat /etc/inferops-vllm-cluster/*.env").stdout
        for secret in secrets:
            assert secret not in env_files
    assert json.loads(metadata)  # the inspected containers were really there


@pytest.mark.readonly
def test_diagnose_report_masks_secrets(lab, tmp_path):
    report = tmp_path / "diagnose.md"
    result = lab.playbook(tmp_path, "--check", "-e", f"diagnose_report={report}", playbook="playbooks/diagnose.yml")
    assert result.returncode == 0, (result.stdout + result.stderr)[-2000:]
    text = report.read_text()
    assert "spark-1" in text and "198.18.1.12" in text and "Every check passed." in text
    for secret in [ray_token(), api_key()]:
        assert secret not in text


@pytest.mark.readonly
def test_rays_world_writable_temp_root_sits_in_a_root_only_directory(lab):
    for host in ("spark-1", "spark-2"):
        modes = lab.node(host, "stat", "-c", "%a %U", "/var/lib/inferops-vllm-cluster/ray",
                         "/var/lib/inferops-vllm-cluster/ray/tmp").stdout.split("\n")
        # Ray made its temp root 0777 itself; no user but root can reach it
        assert modes[:2] == ["700 root", "777 root"], (host, modes)


@pytest.mark.readonly
def test_a_dry_run_names_a_new_variable_and_its_node_but_no_secret(lab, tmp_path, unchanged):
    """#33 item 5: one harmless variable added on spark-2, previewed as a new user would (--check --diff): the env
    file's diff names it and its value on spark-2 alone, and masks a secret added beside it, even at -vvv."""
    secret = "hf_dryrun_" + "5" * 24
    hosts = copy.deepcopy(lab.hosts)
    hosts["vllm_cluster"]["children"]["ray_workers"]["hosts"]["spark-2"]["vllm_cluster_extra_env"] = {
        "PROBE": "on", "PROBE_TOKEN": secret, "PROBE_PROXY": f"http://user:{secret}@proxy.invalid:3128"}
    result = lab.playbook(tmp_path, "--check", "--diff", "-vvv", "--tags", "docker_runtime", hosts=hosts)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    for hidden in (secret, ray_token(), api_key()):
        assert hidden not in output
    render = next(section for section in output.split("\nTASK [")
                  if "Render the container environment pinned to the interconnect" in section.splitlines()[0])
    assert re.search(r"^changed: \[spark-2\]", render, re.M), render[-3000:]
    assert re.search(r"^ok: \[spark-1\]", render, re.M), render[-3000:]
    assert "+PROBE=on\n" in render and "+PROBE_TOKEN=****\n" in render, render[-3000:]
    assert "+PROBE_PROXY=http://user:****@proxy.invalid:3128\n" in render, render[-3000:]


@pytest.mark.readonly
def test_a_dry_run_creates_no_secret_on_the_controller(lab, tmp_path, unchanged):
    """A controller without the supervisors' secret yet (a new copy of the inventory, records elsewhere): --check
    previews the supervisor's files and creates nothing in the records directory (the password lookup would have)."""
    records = tmp_path / "records"
    records.mkdir()
    result = lab.playbook(tmp_path, "--check", "--diff", "--tags", "supervisor", "-e", f"vllm_cluster_records_dir={records}")
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert "Read the supervisors' secret" in result.stdout, result.stdout[-3000:]
    assert sorted(path.name for path in records.iterdir()) == []


@pytest.mark.readonly
def test_a_link_planted_where_the_ipc_directory_belongs_is_refused_not_followed(lab, tmp_path, unchanged):
    """Every container shares the node's /tmp/ray read-write: a process in one can replace vllm-rpc with a link. The
    run (as root) must refuse it, not chmod or create where it points. A session directory of the test's own, so the
    serving cluster's IPC sockets stay untouched."""
    session, target = "/root/inferops-probe-session", "/root/inferops-probe-target"
    lab.node("spark-2", "sh", "-c", f"rm -rf {session} {target} && mkdir -p {session}/tmp {target} && chmod 0755 {target}"
             f" && chmod 0700 {session} && chmod 0777 {session}/tmp && ln -s {target} {session}/tmp/vllm-rpc")
    try:
        result = lab.playbook(tmp_path, "--tags", "docker_runtime", "--limit", "spark-2",
                              "-e", f"vllm_cluster_ray_session_dir={session}")
        assert result.returncode != 0
        assert f"{session}/tmp/vllm-rpc already exists as a link" in flat(result.stdout + result.stderr), result.stdout[-3000:]
        assert lab.node("spark-2", "stat", "-c", "%a %U", target).stdout.split() == ["755", "root"]
    finally:
        lab.node("spark-2", "rm", "-rf", session, target)
