"""The production path, proven without hardware: the collection's own roles rendered for the two
Sparks of inventories/sparks from fixture facts (tests/fixtures/sparks), checked line by line the
way an operator who has run vLLM on two Sparks would. No lab, no network, no host contacted."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
MANAGEMENT = ("10.1.230.180", "10.1.230.181", "10.1.230.")
INTERCONNECT_IFACE = "enp1s0f1np1"
# NGC's vLLM images ship without Ray from 26.05 (#32): the example's mp variant is the one to use with them
RAYLESS_IMAGE = "nvcr.io/nvidia/vllm:26.05-py3"


def _rendered(out: pathlib.Path, *extra: str) -> pathlib.Path:
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    result = subprocess.run(
        ["ansible-playbook", "tests/render/render.yml", "-i", "inventories/sparks",
         "-e", f"render_dir={out}", "-e", f"fixtures_dir={REPO / 'tests' / 'fixtures' / 'sparks'}", *extra],
        cwd=REPO, env=env, text=True, capture_output=True, timeout=300, check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    return out


@pytest.fixture(scope="module")
def render(tmp_path_factory) -> pathlib.Path:
    return _rendered(tmp_path_factory.mktemp("render"))


@pytest.fixture(scope="module")
def render_mp(tmp_path_factory) -> pathlib.Path:
    """The same inventory with the Ray-free backend chosen (vLLM's own launcher), as the example says to run an NGC
    image without Ray (26.05 and later)."""
    return _rendered(tmp_path_factory.mktemp("render_mp"), "-e", "vllm_cluster_backend=mp",
                     "-e", f"vllm_cluster_image={RAYLESS_IMAGE}")


def env_file(render: pathlib.Path, host: str, name: str = "node.env") -> dict[str, str]:
    lines = (render / host / name).read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def container(render: pathlib.Path, host: str, name: str = "ray_container.json") -> dict:
    return json.loads((render / host / name).read_text())


def test_head_starts_pinned_to_its_interconnect_address(render):
    command = container(render, "spark-1")["command"]
    assert command[:2] == ["start", "--head"]
    assert "--node-ip-address=192.168.200.12" in command
    assert "--port=6379" in command
    assert "--num-gpus=1" in command
    assert "--dashboard-host=127.0.0.1" in command


def test_worker_joins_the_head_over_the_interconnect_pinned_to_its_own(render):
    command = container(render, "spark-2")["command"]
    assert command[0] == "start"
    assert "--address=192.168.200.12:6379" in command
    assert "--node-ip-address=192.168.200.13" in command


@pytest.mark.parametrize("host", ["spark-1", "spark-2"])
def test_every_ray_port_is_pinned_and_the_management_side_reaches_only_ssh_and_the_api(render, host):
    command = container(render, host)["command"]
    for flag in ("--node-manager-port=6380", "--object-manager-port=6381", "--dashboard-agent-grpc-port=6382",
                 "--metrics-export-port=6383", "--runtime-env-agent-port=6384", "--dashboard-agent-listen-port=52365",
                 "--min-worker-port=10002", "--max-worker-port=19999"):
        assert flag in command
    assert ("--ray-client-server-port=10001" in command) == (host == "spark-1")
    env = env_file(render, host)
    assert (env["AUTOSCALER_METRIC_PORT"], env["DASHBOARD_METRIC_PORT"]) == ("44217", "44227")
    # Ray's 30 s drain on SIGTERM (for Ray Serve) off: a stop is Ray's graceful shutdown at once, not SIGKILL at 10 s
    assert env["RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S"] == "0"
    rules = (render / host / "ray-firewall.nft").read_text()
    # from the management side only SSH and, on the head, vLLM's API (#32): everything else of the cluster's only
    # over the interconnect, whatever port it picked
    assert ("elements = { 22, 8000 }" if host == "spark-1" else "elements = { 22 }") in rules
    accepts = [line.strip() for line in rules.splitlines() if line.strip().endswith("accept")]
    assert accepts == ['iif "lo" accept', "ip saddr 192.168.200.0/24 accept", "ct state established,related accept",
                       "tcp dport @management_ports accept"]
    assert "meta l4proto tcp counter reject with tcp reset" in rules
    # reloaded at boot before Docker's restart policy brings Ray back, and after nftables.service's `flush ruleset`
    unit = dict(line.split("=", 1) for line in (render / host / "ray-firewall.service").read_text().splitlines()
                if "=" in line and not line.startswith("#"))
    assert unit["ExecStart"] == "/usr/sbin/nft -f /etc/inferops-vllm-cluster/ray-firewall.nft"
    assert "docker.service" in unit["Before"].split() and unit["After"] == "nftables.service"
    assert unit["ExecStop"] == "/usr/sbin/nft delete table inet inferops_vllm_cluster_ray"


@pytest.mark.parametrize(("host", "ip"), [("spark-1", "192.168.200.12"), ("spark-2", "192.168.200.13")])
def test_env_pins_every_layer_to_the_interconnect(render, host, ip):
    env = env_file(render, host)
    assert env["VLLM_HOST_IP"] == ip
    # NCCL reads a bare name as a prefix (enp1s0f1np1 would also take enp1s0f1np10): '=' asks for this one (F23)
    assert env["NCCL_SOCKET_IFNAME"] == "=" + INTERCONNECT_IFACE
    for name in ("GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "UCX_NET_DEVICES", "OMPI_MCA_btl_tcp_if_include"):
        assert env[name] == INTERCONNECT_IFACE, name
    assert env["MASTER_ADDR"] == "192.168.200.12"
    assert env["NCCL_IB_DISABLE"] == "0"
    assert env["NCCL_IB_HCA"] == "rocep1s0f1,roceP2p1s0f1"
    # the GID index is NCCL's to pick: the twin port has no IPv4 RoCE v2 GID at 3 (F23)
    assert "NCCL_IB_GID_INDEX" not in env
    assert env["NVIDIA_DRIVER_CAPABILITIES"] == "all"
    assert env["RAY_memory_monitor_refresh_ms"] == "0"  # GB10 unified memory
    assert env["HF_HOME"] == "/root/.cache/huggingface"
    assert env["VLLM_CACHE_ROOT"] == "/root/.cache/vllm"  # the mounted vllm_cluster_vllm_cache_dir
    # the other JIT caches, in the mounted vllm_cluster_compile_cache_dir: a restart compiles nothing again
    assert (env["TRITON_CACHE_DIR"], env["TORCHINDUCTOR_CACHE_DIR"], env["FLASHINFER_WORKSPACE_BASE"], env["CUDA_CACHE_PATH"]) == (
        "/root/.cache/compile/triton", "/root/.cache/compile/torchinductor", "/root/.cache/compile", "/root/.cache/compile/nv")
    # the hub token, when set, is a root-only file; never an environment variable
    assert env["HF_TOKEN_PATH"].endswith(f"{host}/hf_token")  # in the config dir (the render dir here), mounted read-only
    assert "HF_TOKEN" not in env and "HUGGING_FACE_HUB_TOKEN" not in env


@pytest.mark.parametrize("host", ["spark-1", "spark-2"])
def test_every_hca_nccl_is_told_to_use_exists_with_its_gids(render, host):
    """Preflight's F23 check against each Spark's /sys/class/infiniband (fixtures): the example passes it."""
    assert json.loads((render / host / "rdma_problems.json").read_text()) == []


def test_ray_leaves_the_unified_memory_to_the_model(render):
    for host in ("spark-1", "spark-2"):
        command = container(render, host)["command"]
        assert "--object-store-memory=4294967296" in command and "--num-cpus=4" in command, host


def test_vllm_waits_for_its_engine_as_long_as_the_role_waits_for_vllm(render):
    """F16: vLLM's own engine deadline (600 s by default) is the role's health wait, not ten minutes."""
    assert env_file(render, "spark-1", "vllm.env")["VLLM_ENGINE_READY_TIMEOUT_S"] == "3600"
    assert "VLLM_ENGINE_READY_TIMEOUT_S" not in env_file(render, "spark-1")  # the Ray containers start no engine


@pytest.mark.parametrize("host", ["spark-1", "spark-2"])
def test_ray_container_shape(render, host):
    spec = container(render, host)
    # Qwen3.5 needs vLLM 0.17+: 26.03 ships 0.17.1 (25.09 shipped 0.10.1.1, F24)
    assert spec["image"] == "nvcr.io/nvidia/vllm:26.03-py3"
    assert spec["network_mode"] == "host" and spec["ipc_mode"] == "host"
    assert "shm_size" not in spec  # host IPC: the host's /dev/shm
    assert spec["device_requests"] == [{"driver": "nvidia", "count": -1, "capabilities": [["gpu"]]}]
    assert spec["devices"] == ["/dev/infiniband:/dev/infiniband"]
    assert "memlock:-1:-1" in spec["ulimits"] and "IPC_LOCK" in spec["capabilities"]
    assert "/var/lib/inferops-vllm-cluster/huggingface:/root/.cache/huggingface:ro" in spec["volumes"]  # staged: read-only
    assert "/var/lib/inferops-vllm-cluster/vllm:/root/.cache/vllm" in spec["volumes"]
    assert "/var/lib/inferops-vllm-cluster/compile:/root/.cache/compile" in spec["volumes"]
    assert spec["env_file"] == "/etc/inferops-vllm-cluster/node.env"
    assert spec["labels"]["inferops.vllm_cluster.node"] == host
    assert spec["init"] is True and spec["restart_policy"] == "unless-stopped"


def test_vllm_serves_the_model_tensor_parallel_over_ray(render):
    spec = container(render, "spark-1", "vllm_container.json")
    command = spec["command"]

    def arg(flag):
        return command[command.index(flag) + 1]

    # A launcher that exports the API key from its root-only file, then execs python3 with the command.
    assert spec["entrypoint"][:2] == ["/bin/sh", "-c"] and 'exec python3 "$@"' in spec["entrypoint"][2]
    # the example keeps its key in Vault, commented out: no key file wanted
    assert spec["entrypoint"][3:] == ["vllm-server", ""]
    assert command[:2] == ["-m", "vllm.entrypoints.openai.api_server"]
    assert arg("--model") == "Qwen/Qwen3.5-122B-A10B-FP8"
    assert arg("--tensor-parallel-size") == "2"
    assert arg("--distributed-executor-backend") == "ray"
    # the revision staging pinned on every node, not whatever refs/main says offline (#31 item 5)
    assert arg("--revision") == "main" and arg("--tokenizer-revision") == "main"
    # A Ray driver: shares the head's Ray session directory, and reads a pinned env of its own.
    assert "/var/lib/inferops-vllm-cluster/ray/tmp:/tmp/ray" in spec["volumes"]
    assert env_file(render, "spark-1", "vllm.env")["VLLM_HOST_IP"] == "192.168.200.12"
    assert spec["device_requests"] and spec["network_mode"] == "host"
    # Not restarted by Docker after a reboot: a driver in the head's PID namespace cannot rejoin it by itself;
    # site.yml (or --tags vllm) brings it back after validating Ray (docs/compared.md, "After a reboot").
    assert spec["restart_policy"] == "no"


@pytest.mark.parametrize(
    "case, key, served",
    [
        ("a key", "k-123\n", "VLLM_API_KEY=k-123"),
        ("key file missing", None, None),
        ("key file empty", "", None),
        ("no key wanted", False, "VLLM_API_KEY=None"),
    ],
)
def test_the_api_key_launcher_fails_closed(render, tmp_path, case, key, served):
    """The rendered launcher, run by a real /bin/sh: with a key wanted, no key means no server."""
    entrypoint = container(render, "spark-1", "vllm_container.json")["entrypoint"]
    # a space in the path: the path is an argument, never spliced into the script
    key_file = tmp_path / "config dir" / "vllm_api_key"
    key_file.parent.mkdir()
    if isinstance(key, str):
        key_file.write_text(key)
    argv = entrypoint[:4] + ["" if key is False else str(key_file),
                             "-c", "import os; print('VLLM_API_KEY=%s' % os.environ.get('VLLM_API_KEY'))"]
    env = {k: v for k, v in os.environ.items() if k != "VLLM_API_KEY"}
    result = subprocess.run(argv, text=True, capture_output=True, env=env, timeout=30, check=False)
    if served:
        assert result.returncode == 0 and result.stdout.strip() == served, (case, result)
    else:
        assert result.returncode == 78 and not result.stdout, (case, result)
        assert f"the API key file {key_file} is missing, unreadable or empty: refusing to serve" in result.stderr, case


def test_vllm_driver_joins_the_ray_head_as_the_lab_measured_it_must(render):
    """What made TP=2 over Ray span the lab's two nodes, rendered for the Sparks unchanged."""
    spec = container(render, "spark-1", "vllm_container.json")
    # Ray's driver finds its node's raylet by process: the head container's PID namespace, no init of its own.
    assert spec["pid_mode"] == "container:vllm-cluster-ray-head"
    assert spec["init"] is False and spec["ipc_mode"] == "host"
    # The engine and its local rank (a Ray actor in the head's container) meet on IPC sockets in a
    # directory both containers mount at the same path.
    for host in ("spark-1", "spark-2"):
        assert env_file(render, host)["VLLM_RPC_BASE_PATH"] == "/tmp/ray/vllm-rpc"
        assert "/var/lib/inferops-vllm-cluster/ray/tmp:/tmp/ray" in container(render, host)["volumes"]
    assert env_file(render, "spark-1", "vllm.env")["VLLM_RPC_BASE_PATH"] == "/tmp/ray/vllm-rpc"
    # A Ray container keeps its own init and PID namespace.
    assert "pid_mode" not in container(render, "spark-1") and container(render, "spark-1")["init"] is True


def test_no_management_address_in_the_cluster_wiring(render):
    wiring = []
    for host in ("spark-1", "spark-2"):
        wiring += [(render / host / "node.env").read_text(), (render / host / "ray_container.json").read_text()]
    wiring.append((render / "spark-1" / "vllm.env").read_text())
    vllm = container(render, "spark-1", "vllm_container.json")
    command = list(vllm["command"])
    # --host is where clients connect (the LAN, on purpose), not cluster wiring.
    del command[command.index("--host"):command.index("--host") + 2]
    wiring.append(json.dumps(dict(vllm, command=command)))
    for text in wiring:
        for address in MANAGEMENT:
            assert address not in text
        assert "enP7s7" not in text


# The Ray-free backend (vllm_cluster_backend=mp): vLLM's own launcher on both Sparks, from the same inventory.

@pytest.mark.parametrize(("host", "rank", "ip"), [("spark-1", 0, "192.168.200.12"), ("spark-2", 1, "192.168.200.13")])
def test_mp_every_spark_runs_its_rank_meeting_on_the_heads_interconnect_address(render, render_mp, host, rank, ip):
    spec = container(render_mp, host, "vllm_container.json")
    command = spec["command"]

    def arg(flag):
        return command[command.index(flag) + 1]

    # `vllm serve MODEL`: the CLI, the only entry point with the multi-node launcher flags and --headless
    assert command[:4] == ["-m", "vllm.entrypoints.cli.main", "serve", "Qwen/Qwen3.5-122B-A10B-FP8"]
    assert "--model" not in command
    assert (arg("--nnodes"), arg("--node-rank")) == ("2", str(rank))
    assert (arg("--master-addr"), arg("--master-port")) == ("192.168.200.12", "29501")
    assert arg("--distributed-executor-backend") == "mp"
    assert (arg("--tensor-parallel-size"), arg("--pipeline-parallel-size")) == ("2", "1")
    assert ("--headless" in command) == (rank > 0)
    assert command.count("--distributed-executor-backend") == 1
    # no Ray: no head PID namespace to join, an init of its own
    assert "pid_mode" not in spec and spec["init"] is True
    assert spec["network_mode"] == "host" and spec["ipc_mode"] == "host" and spec["device_requests"]
    # the pinning every rank reads, flag by flag
    env = env_file(render_mp, host, "vllm.env")
    assert env["VLLM_HOST_IP"] == ip
    assert env["GLOO_SOCKET_IFNAME"] == INTERCONNECT_IFACE
    assert env["NCCL_SOCKET_IFNAME"] == "=" + INTERCONNECT_IFACE
    assert env["MASTER_ADDR"] == "192.168.200.12"
    assert env["VLLM_ENGINE_READY_TIMEOUT_S"] == "3600"
    for address in MANAGEMENT:
        assert address not in (render_mp / host / "vllm.env").read_text()
    # the Ray backend's launcher, unchanged (the example keeps its API key in Vault, commented out: no key file)
    assert spec["entrypoint"][:3] == container(render, "spark-1", "vllm_container.json")["entrypoint"][:3]
    assert spec["entrypoint"][3:] == ["vllm-server", ""]


@pytest.mark.parametrize("host", ["spark-1", "spark-2"])
def test_mp_serves_an_image_without_ray_with_nothing_of_ray(render_mp, host):
    """#32 item 5: the example's mp variant with a Ray-less NGC image: every rank runs that image with vLLM's own
    launcher, and nothing in its command or environment asks for Ray (the shared /tmp/ray mount is an empty folder
    under mp)."""
    spec = container(render_mp, host, "vllm_container.json")
    assert spec["image"] == RAYLESS_IMAGE
    command = spec["command"]
    assert command[:3] == ["-m", "vllm.entrypoints.cli.main", "serve"]
    assert command[command.index("--distributed-executor-backend") + 1] == "mp"
    env = (render_mp / host / "vllm.env").read_text()
    assert not [arg for arg in command if "ray" in arg.lower()], command
    # (the example's RAY_memory_monitor_refresh_ms=0 is read by no one here)
    assert "RAY_ADDRESS" not in env and "RAY_TMPDIR" not in env, env


def test_mp_rank_zero_listens_for_clients_where_the_ray_backend_does(render, render_mp):
    ray_command = container(render, "spark-1", "vllm_container.json")["command"]
    mp_command = container(render_mp, "spark-1", "vllm_container.json")["command"]
    for flag in ("--host", "--port", "--served-model-name", "--gpu-memory-utilization"):
        assert mp_command[mp_command.index(flag) + 1] == ray_command[ray_command.index(flag) + 1]


@pytest.mark.parametrize("host", ["spark-1", "spark-2"])
def test_mp_the_firewall_admits_the_rendezvous_from_the_interconnect_only(render_mp, host):
    rules = (render_mp / host / "ray-firewall.nft").read_text()
    # the rendezvous port (29501) and the ranks' random ones: from the interconnect interface only, as under Ray
    assert ("elements = { 22, 8000 }" if host == "spark-1" else "elements = { 22 }") in rules
    accepts = [line.strip() for line in rules.splitlines() if line.strip().endswith("accept")]
    assert accepts == ['iif "lo" accept', "ip saddr 192.168.200.0/24 accept", "ct state established,related accept",
                       "tcp dport @management_ports accept"]


def test_the_ray_backend_runs_no_vllm_on_the_worker(render):
    assert not (render / "spark-2" / "vllm_container.json").exists()
    assert "29501" not in (render / "spark-1" / "ray-firewall.nft").read_text()


def test_weights_are_downloaded_once_on_the_head_with_the_token_file(render):
    weights = json.loads((render / "spark-1" / "weights.json").read_text())
    assert weights["staged"] and weights["head"] == "spark-1"
    argv = weights["download"]
    assert argv[:3] == ["docker", "run", "--rm"] and argv[argv.index("--network") + 1] == "host"
    # huggingface_hub reads the token from the root-only file HF_TOKEN_PATH names in the env file
    assert argv[argv.index("--env-file") + 1] == "/etc/inferops-vllm-cluster/node.env"
    assert weights["token_file"] == "/etc/inferops-vllm-cluster/hf_token"
    assert env_file(render, "spark-1")["HF_TOKEN_PATH"].endswith("/hf_token")  # (rendered under render_dir here)
    assert "/etc/inferops-vllm-cluster:/etc/inferops-vllm-cluster:ro" in argv
    assert "/var/lib/inferops-vllm-cluster/huggingface:/root/.cache/huggingface" in argv
    assert argv[argv.index("--env") + 1] == "HF_HUB_OFFLINE=0"  # the one container that may reach the hub
    assert argv[-4:] == ["Qwen/Qwen3.5-122B-A10B-FP8", "main", "spark-1", "/var/lib/inferops-vllm-cluster/huggingface"]
    assert not [arg for arg in argv if "hf_" in arg.lower() and "token" in arg.lower() and "PATH" not in arg]


@pytest.mark.parametrize("host", ["spark-1", "spark-2"])
def test_weights_travel_over_the_interconnect_and_every_container_runs_offline(render, host):
    weights = json.loads((render / host / "weights.json").read_text())
    assert weights["server_address"] == "192.168.200.12" and weights["port"] == 29510
    assert weights["url"] == "http://192.168.200.12:29510"
    assert not any(weights["url"].find(prefix) >= 0 for prefix in MANAGEMENT)
    assert env_file(render, host)["HF_HUB_OFFLINE"] == "1"
    if (render / host / "vllm.env").exists():
        assert env_file(render, host, "vllm.env")["HF_HUB_OFFLINE"] == "1"


@pytest.mark.parametrize("host, rank", [("spark-1", 0), ("spark-2", 1)])
def test_the_link_gate_runs_nccl_in_the_serving_image_as_a_spark_would(render, host, rank):
    gate = container(render, host, "link_gate.json")
    spec, settings = gate["spec"], gate["settings"]
    # the image, devices, limits, network and pinned environment vLLM's ranks get
    ray = container(render, host)
    for key in ("image", "network_mode", "ipc_mode", "device_requests", "devices", "ulimits", "capabilities",
                "env_file"):
        assert spec[key] == ray[key], key
    assert spec["devices"] == ["/dev/infiniband:/dev/infiniband"] and "memlock:-1:-1" in spec["ulimits"]
    # NCCL's own account of its library and transport, in the gate's container only, into the file it reads back
    assert spec["env"] == {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET",
                           "NCCL_DEBUG_FILE": "/tmp/nccl-link-gate.%h.%p.log"}
    assert "NCCL_DEBUG" not in env_file(render, host)  # never in the serving containers' environment
    # the HCAs and the interface NCCL is told to use come from the node's env file the gate reads
    pinned = env_file(render, host)
    assert pinned["NCCL_IB_HCA"] == "rocep1s0f1,roceP2p1s0f1"
    assert pinned["NCCL_SOCKET_IFNAME"] == f"={INTERCONNECT_IFACE}"
    assert spec["volumes"] == [] and spec["labels"]["inferops.vllm_cluster.component"] == "link-gate"
    assert spec["entrypoint"] == ["python3"] and spec["command"][0] == "-c"
    params = json.loads(spec["command"][2])
    assert (params["rank"], params["world"], params["host"]) == (rank, 2, host)
    assert (params["backend"], params["address"], params["port"]) == ("nccl", "192.168.200.12", 29520)
    assert params["max_bytes"] == 1 << 30
    assert params["nccl_log_glob"] == "/tmp/nccl-link-gate.*.log"
    # NVIDIA's figures for a direct ConnectX-7 link (inventories/sparks says why), RDMA expected
    assert settings["min_bus_bandwidth"] == 10.0 and settings["rdma"] is True
    assert not any(address in spec["command"][2] for address in MANAGEMENT)
