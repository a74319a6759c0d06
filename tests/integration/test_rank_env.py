"""#32 item 1: vLLM's Ray executor copies the driver's environment into every rank on every node. The lab's spark-2
names its interconnect port ic0, spark-1 eth1 (lab/images/node/entrypoint.sh): each rank starts with its own
node's names (what /proc shows), and the driver on spark-1 must carry neither its pins nor the API key into the
ranks past the collection's list (what vLLM then sets inside the rank, which /proc does not show: the driver's
side is what fails without the list, as before #32)."""

from __future__ import annotations

import pytest

from conftest import task_outcome

# Beside the weights group: it changes only the list on spark-1 and runs validate, neither of which that group's
# playbooks (staging) touch.
pytestmark = pytest.mark.grouped("runtime-image")

LIST = "/etc/inferops-vllm-cluster/ray_non_carry_over_env_vars.json"
CHECK = "Check vLLM's ranks on this node run with its own pinning, and the driver carries none into them (F7)"


def rank_variables(lab, host, name):
    """The value of name in each vLLM rank process (Ray actors) on host, as the process started with it."""
    container = "vllm-cluster-ray-" + ("head" if host == "spark-1" else "worker")
    out = lab.node(host, "docker", "exec", container, "sh", "-c",
                   "for p in /proc/[0-9]*; do case \"$(tr '\\0' ' ' < $p/cmdline)\" in "
                   f"ray::RayWorker*) tr '\\0' '\\n' < $p/environ | grep '^{name}=' || echo 'unset';; esac; done")
    return out.stdout.split()


def test_each_rank_keeps_its_nodes_names_and_validate_reads_what_the_driver_would_carry(lab, tmp_path):
    assert rank_variables(lab, "spark-1", "GLOO_SOCKET_IFNAME") == ["GLOO_SOCKET_IFNAME=eth1"]
    assert rank_variables(lab, "spark-2", "GLOO_SOCKET_IFNAME") == ["GLOO_SOCKET_IFNAME=ic0"]
    assert rank_variables(lab, "spark-2", "NCCL_SOCKET_IFNAME") == ["NCCL_SOCKET_IFNAME==ic0"]
    listed = lab.node("spark-1", "cat", LIST).stdout
    assert '"VLLM_API_KEY"' in listed and '"GLOO_SOCKET_IFNAME"' in listed, listed

    passed = lab.playbook(tmp_path, "--tags", "validate")
    assert passed.returncode == 0, passed.stdout[-3000:]
    assert task_outcome(passed.stdout, CHECK, "spark-2") == "ok"

    # Before #32 vLLM found no list: emptied in place (the server's mount keeps this inode), validate names what
    # the driver on spark-1 would copy into spark-2's ranks.
    lab.node("spark-1", "sh", "-c", f"printf '[]' > {LIST}")
    try:
        result = lab.playbook(tmp_path, "--tags", "validate")
    finally:
        lab.node("spark-1", "sh", "-c", f"cat > {LIST}", stdin=listed)
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode != 0, output[-3000:]
    assert "[F7] spark-1: vLLM's Ray executor would copy GLOO_SOCKET_IFNAME" in output, output[-3000:]
    carried = output.split("would copy ", 1)[1].split(" from spark-1's driver", 1)[0]
    assert {"NCCL_SOCKET_IFNAME", "UCX_NET_DEVICES", "VLLM_API_KEY"} <= set(carried.split(", ")), carried
    assert "VLLM_HOST_IP" not in carried  # vLLM leaves it out by itself
    assert "lab-not-a-secret" not in output


def test_validate_names_a_container_that_runs_otherwise_than_pinned(lab, tmp_path):
    """The containers' own pinning (cluster_validate's pinned_env.yml, read by node_state): validate asked to expect
    another interface than the one every Ray container runs with names each container and the variable, with the
    value found and the one pinned, and nothing else of the containers' environment (which holds secrets)."""
    result = lab.playbook(tmp_path, "--tags", "validate",
                          "-e", '{"vllm_cluster_interconnect_env": {"GLOO_SOCKET_IFNAME": "bogus0"}}')
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode != 0, output[-3000:]
    assert ("[F7] spark-2: container vllm-cluster-ray-worker runs with GLOO_SOCKET_IFNAME=ic0 (pinned: bogus0)"
            in output), output[-3000:]
    assert "[F7] spark-1: container vllm-cluster-ray-head runs with GLOO_SOCKET_IFNAME=eth1 (pinned: bogus0)" in output
    assert "lab-not-a-secret" not in output and "RAY_AUTH_TOKEN_PATH" not in output
