"""The supervisor program (issue #35) end to end on loopback: a leader and a follower, each with a Docker Engine API
of its own on a Unix socket (a small fake that keeps containers' states and the calls made), a vLLM that answers or
does not, and the signed messages between them. The lab proves the same with real containers
(tests/integration/test_supervisor.py)."""

from __future__ import annotations

import http.server
import json
import os
import socket
import socketserver
import threading
import typing as t

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _supervisor_program as program


class FakeDocker(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str, containers: dict[str, dict[str, str]]) -> None:
        self.containers = containers
        self.calls: list[str] = []
        docker = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def address_string(self) -> str:
                return "docker"

            def log_message(self, *args: t.Any) -> None:
                return None

            def reply(self, status: int, body: bytes = b"") -> None:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                name = self.path.split("/")[2]
                if name not in docker.containers:
                    return self.reply(404, b"{}")
                if self.path.endswith("/json"):
                    state = docker.containers[name]
                    return self.reply(200, json.dumps({"State": {"Status": state["state"],
                                                                 "StartedAt": state["started"]}}).encode())
                # a log as Docker frames it without a TTY: stdout, then stderr
                text = b"\x1b[36mloading\x1b[0m\n"
                error = b"RuntimeError: boom\n"
                return self.reply(200, b"\x01\0\0\0" + len(text).to_bytes(4, "big") + text
                                  + b"\x02\0\0\0" + len(error).to_bytes(4, "big") + error)

            def do_POST(self) -> None:  # noqa: N802
                name, action = self.path.split("/")[2], self.path.split("/")[3].split("?")[0]
                docker.calls.append(f"{action} {name}")
                state = docker.containers[name]
                if action == "restart":
                    state.update(state="running", started=f"{state['started']}+")
                else:
                    state["state"] = "exited"
                return self.reply(204)

        super().__init__(path, Handler)


class FakeVllm(http.server.ThreadingHTTPServer):
    def __init__(self) -> None:
        self.health, self.tokens, self.completions = 200, 1, 0
        # Ray's dashboard API on the head (the Ray backend's leader asks it before a restart)
        self.ray_alive, self.ray_token = ["127.0.0.1", "127.0.0.2"], ""
        vllm = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: t.Any) -> None:
                return None

            def reply(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                if self.path == "/health":
                    return self.reply(vllm.health, b"")
                if self.path.startswith("/api/v0/nodes"):
                    vllm.ray_token = self.headers.get("Authorization", "")
                    rows = [{"node_ip": ip, "state": "ALIVE"} for ip in vllm.ray_alive] + [
                        {"node_ip": "127.0.0.2", "state": "DEAD"}]
                    return self.reply(200, json.dumps({"data": {"result": {"result": rows}}}).encode())
                return self.reply(200, b'vllm:generation_tokens_total{engine="0"} 10.0\n'
                                       b'vllm:num_requests_running{engine="0"} 0.0\n')

            def do_POST(self) -> None:  # noqa: N802
                assert self.headers["Authorization"] == "Bearer the-key"
                self.rfile.read(int(self.headers["Content-Length"]))
                vllm.completions += 1
                return self.reply(200, json.dumps({"usage": {"completion_tokens": vllm.tokens}}).encode())

        super().__init__(("127.0.0.1", 0), Handler)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def cluster(tmp_path):
    """A leader (spark-1) and a follower (spark-2) on loopback, each with its Docker; vLLM on loopback."""
    vllm = FakeVllm()
    threading.Thread(target=vllm.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    (tmp_path / "secret").write_text("s3cret\n")
    (tmp_path / "key").write_text("the-key\n")
    port = free_port()
    made = {}
    for node, role, address in (("spark-1", "leader", "127.0.0.1"), ("spark-2", "follower", "127.0.0.2")):
        docker = FakeDocker(str(tmp_path / f"{node}.sock"), {"vllm": {"state": "running", "started": "t0"}})
        threading.Thread(target=docker.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        config = {"node": node, "role": role, "ranks": ["vllm"], "acts": True, "listen": address, "port": port,
                  "secret_file": str(tmp_path / "secret"), "state_file": str(tmp_path / f"{node}.json"),
                  "docker_socket": str(tmp_path / f"{node}.sock"),
                  "settings": {"interval": 1, "deadline": 2, "failures": 2, "max_restarts": 1, "window": 600,
                               "backoff": 0, "start_grace": 0}}
        if role == "leader":
            config.update(followers={"spark-2": "127.0.0.2"}, followers_act=True,
                          url=f"http://127.0.0.1:{vllm.server_address[1]}", model="m", key_file=str(tmp_path / "key"))
        else:
            config["leader"] = "127.0.0.1"
        supervisor = program.Supervisor(config)
        server = supervisor.serve()
        made[node] = (supervisor, docker, server)
    yield made, vllm
    for supervisor, docker, server in made.values():
        server.shutdown()
        docker.shutdown()
    vllm.shutdown()


def test_a_serving_cluster_is_watched_and_nothing_is_restarted(cluster):
    made, vllm = cluster
    leader, docker = made["spark-1"][:2]
    leader.lead_once()
    leader.lead_once()
    state = json.loads(open(leader.state_file, encoding="utf-8").read())
    assert state["phase"] == "watching" and state["checks"] == 2 and state["failures"] == 0
    assert set(state["starts"]) == {"spark-1/vllm", "spark-2/vllm"} and vllm.completions == 2
    assert docker.calls == [] and os.stat(leader.state_file).st_mode & 0o777 == 0o600


def test_a_rank_down_on_the_follower_restarts_every_rank_then_the_cap_stops_every_rank(cluster):
    made = cluster[0]
    leader, leader_docker = made["spark-1"][:2]
    follower, follower_docker = made["spark-2"][:2]
    follower.follow_once()  # first contact: the leader's history is not replayed
    assert follower.state["acted"]["generation"] == 0 and follower_docker.calls == []
    follower_docker.containers["vllm"]["state"] = "exited"
    leader.lead_once()
    leader.lead_once()
    assert leader_docker.calls == ["restart vllm"] and leader.state["generation"] == 1
    assert leader.state["last_restart"]["logs"]["spark-1/vllm"] == ["loading", "RuntimeError: boom"]
    follower.follow_once()
    assert follower_docker.calls == ["restart vllm"] and follower.state["acted"]["generation"] == 1
    follower.follow_once()  # once per generation
    assert follower_docker.calls == ["restart vllm"]
    # it dies again: the cap (one restart) is reached, every rank stops
    follower_docker.containers["vllm"]["state"] = "exited"
    leader.lead_once()
    leader.lead_once()
    assert leader.state["phase"] == "gave_up" and leader_docker.calls == ["restart vllm", "stop vllm"]
    follower.follow_once()
    assert follower_docker.calls == ["restart vllm", "stop vllm"]
    record = json.loads(open(leader.state_file, encoding="utf-8").read())
    assert record["gave_up"]["logs"]["spark-1/vllm"][-1] == "RuntimeError: boom"
    assert "vllm_cluster_supervisor_gave_up{node=\"spark-1\",role=\"leader\"} 1" in \
        program.ask(f"http://127.0.0.1:{leader.config['port']}/metrics", 2)[1].decode()


def test_a_stuck_engine_no_token_within_the_deadline_restarts_the_group(cluster):
    made, vllm = cluster
    leader, docker = made["spark-1"][:2]
    vllm.tokens = 0
    leader.lead_once()
    leader.lead_once()
    assert docker.calls == ["restart vllm"]
    assert "a one-token completion had no answer within 2 s" in leader.state["last_restart"]["reason"]


def test_a_follower_answering_with_another_secret_is_silent_and_moves_nothing(cluster, tmp_path):
    made = cluster[0]
    leader = made["spark-1"][0]
    follower, follower_docker = made["spark-2"][:2]
    follower.secret = b"another"
    leader.lead_once()
    assert leader.state["last_failure"]["key"] == "peer_silent"
    assert "not signed with the cluster's secret" in leader.state["last_failure"]["reason"]
    # a follower never acts on a leader it cannot verify
    leader.state["generation"] = 7
    follower.follow_once()
    assert follower_docker.calls == [] and follower.state["last_check"]["ok"] is False


def test_the_state_answers_the_nonce_signed_and_other_paths_are_not_found(cluster):
    made = cluster[0]
    follower = made["spark-2"][0]
    status, body, headers = follower.answer("/state?nonce=" + "a" * 100)
    document = json.loads(body)
    assert status == 200 and document["nonce"] == "a" * 64 and document["ranks"]["vllm"]["state"] == "running"
    assert headers[program.SIGNATURE] == program.decisions.sign(b"s3cret", body)
    assert follower.answer("/../etc/passwd")[0] == 404


@pytest.mark.parametrize("body, expected", [
    (b"\x01\0\0\0\0\0\0\x03abc\x02\0\0\0\0\0\0\x02de", b"abcde"),
    (b"plain text, a TTY", b"plain text, a TTY"),
    (b"", b""),
])
def test_a_log_is_read_whether_docker_frames_it_or_not(body, expected):
    assert program.demultiplex(body) == expected


def test_under_ray_the_group_restarts_only_once_every_node_is_alive_in_rays_table(cluster, tmp_path):
    made, vllm = cluster
    leader, docker = made["spark-1"][:2]
    (tmp_path / "ray_token").write_text("ray-token\n")
    leader.config = dict(leader.config, followers_act=False, ray_nodes={
        "url": f"http://127.0.0.1:{vllm.server_address[1]}/api/v0/nodes?detail=false",
        "token_file": str(tmp_path / "ray_token"), "expected": ["127.0.0.1", "127.0.0.2"]})
    docker.containers["vllm"]["state"] = "exited"
    vllm.ray_alive = ["127.0.0.1"]  # spark-2's raylet has not joined the (new) head yet
    for attempt in range(3):
        leader.lead_once()
    assert docker.calls == [] and leader.state["waiting"] == "waiting for 127.0.0.2 in Ray before restarting the group"
    assert vllm.ray_token == "Bearer ray-token"
    vllm.ray_alive = ["127.0.0.1", "127.0.0.2"]
    leader.lead_once()
    assert docker.calls == ["restart vllm"] and leader.state["restarts_total"] == 1


def test_the_leaders_own_signed_answer_relayed_as_a_followers_is_refused(cluster):
    made = cluster[0]
    leader = made["spark-1"][0]
    follower = made["spark-2"][0]
    # the follower's port answers with what the leader signs (a relay of the leader's own /state)
    follower.answer = leader.answer
    leader.lead_once()
    assert leader.state["last_failure"]["key"] == "peer_silent"


def test_a_lost_leader_record_is_followed_anew(cluster):
    made = cluster[0]
    leader, leader_docker = made["spark-1"][:2]
    follower, follower_docker = made["spark-2"][:2]
    leader.state["generation"] = 9
    follower.follow_once()
    assert follower.state["acted"]["generation"] == 9
    os.remove(leader.state_file) if os.path.exists(leader.state_file) else None
    leader.state = leader._load()  # pylint: disable=protected-access
    follower.follow_once()
    assert follower.state["acted"] == {"epoch": leader.state["epoch"], "generation": 0}
    follower_docker.containers["vllm"]["state"] = "exited"
    leader.lead_once()
    leader.lead_once()
    follower.follow_once()
    assert leader_docker.calls == ["restart vllm"] and follower_docker.calls == ["restart vllm"]


def test_it_stands_back_while_an_ansible_run_holds_the_flag(cluster, tmp_path):
    made, vllm = cluster
    leader, docker = made["spark-1"][:2]
    leader.settings = program.decisions.Settings.of(dict(leader.config["settings"], start_grace=100))
    docker.containers["vllm"]["state"] = "exited"
    flag = tmp_path / program.PAUSE_FLAG
    flag.write_text("")
    for attempt in range(3):
        leader.lead_once()
    assert docker.calls == [] and leader.state["paused"] and vllm.completions == 0
    # a failed run's flag, older than the start grace and an hour, is ignored
    os.utime(flag, (os.stat(flag).st_atime, os.stat(flag).st_mtime - 3701))
    leader.lead_once()
    leader.lead_once()
    assert docker.calls == ["restart vllm"] and not leader.state["paused"]
