# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The supervisor: runs in a container of its own on every node that holds a rank (role supervisor), the Python of
the serving image, the standard library only (its decisions: _supervisor.py, copied beside it).

The head's supervisor leads. Every vllm_cluster_liveness_interval it reads each rank's container (its own through
Docker, the other nodes' from their supervisors), /health, a one-token completion within the deadline and vLLM's
/metrics, and decides (_supervisor.decide): nothing, restart every rank together, or give up (stop every rank) at the
cap. The other nodes' supervisors follow: they report their rank's container and restart or stop it when the
leader's generation moves. Messages between them are signed with the cluster's supervisor secret (HMAC-SHA256); a
follower answers the leader's nonce, the leader's generation only moves forward, so a replayed message moves
nothing. Each keeps its record in its state directory (the leader's is the cluster's: validate and diagnose read it)
and serves /metrics for Prometheus.

Run: python3 _supervisor_program.py CONFIG.json
Private to the collection."""

from __future__ import annotations

import http.client
import http.server
import json
import os
import re
import secrets
import signal
import socket
import sys
import threading
import time
import typing as t
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _supervisor as decisions  # noqa: E402  pylint: disable=wrong-import-position

SIGNATURE = "X-Vllm-Cluster-Signature"
LOG_LINES = 30
STOP_TIMEOUT = 10
_COLOUR = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# site.yml's first play writes it in the supervisor's directory on the head, its last removes it
PAUSE_FLAG = "paused"
# how often a follower asks the leader (a restart reaches every rank within this)
FOLLOW_POLL = 3.0


def log(message: str) -> None:
    sys.stdout.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {message}\n")
    sys.stdout.flush()


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("docker", timeout=timeout)
        self.socket_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.socket_path)
        self.sock = sock


class Docker:
    """The few Engine API calls the supervisor makes, over the node's socket."""

    def __init__(self, path: str) -> None:
        self.path = path

    def call(self, method: str, path: str, timeout: float = 30.0) -> tuple[int, bytes]:
        connection = _UnixConnection(self.path, timeout)
        try:
            connection.request(method, path)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def state(self, name: str) -> tuple[str, str]:
        """(Docker's state or "absent", when it started)."""
        status, body = self.call("GET", f"/containers/{urllib.parse.quote(name)}/json")
        if status == 404:
            return "absent", ""
        if status != 200:
            return f"unknown (Docker answered {status})", ""
        document = json.loads(body)
        state = document.get("State") or {}
        return str(state.get("Status") or "unknown"), str(state.get("StartedAt") or "")

    def restart(self, name: str) -> int:
        # stop sends SIGTERM, SIGKILL after the timeout: a stopped (SIGSTOP) process ends by the second
        return self.call("POST", f"/containers/{urllib.parse.quote(name)}/restart?t={STOP_TIMEOUT}",
                         STOP_TIMEOUT + 60)[0]

    def stop(self, name: str) -> int:
        return self.call("POST", f"/containers/{urllib.parse.quote(name)}/stop?t={STOP_TIMEOUT}", STOP_TIMEOUT + 60)[0]

    def logs(self, name: str, lines: int = LOG_LINES) -> list[str]:
        status, body = self.call("GET", f"/containers/{urllib.parse.quote(name)}/logs?stdout=1&stderr=1&tail={lines}")
        if status != 200:
            return [f"(docker logs answered {status})"]
        # colours out, each line cut: the record stays small (validate reads it, 64 KiB at most)
        text = _COLOUR.sub("", demultiplex(body).decode(errors="replace"))
        return [line[:300] for line in text.splitlines()[-lines:]]


def demultiplex(body: bytes) -> bytes:
    """A container's log as Docker sends it without a TTY: frames of an 8-byte header (stream, 0, 0, 0, size) and
    the text; anything else is the text as it is."""
    out, offset = [], 0
    while offset + 8 <= len(body) and body[offset] in (0, 1, 2) and body[offset + 1:offset + 4] == b"\0\0\0":
        size = int.from_bytes(body[offset + 4:offset + 8], "big")
        out.append(body[offset + 8:offset + 8 + size])
        offset += 8 + size
    return b"".join(out) + body[offset:] if out else body


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: t.Any, **kwargs: t.Any) -> None:  # pylint: disable=unused-argument
        return None


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect)


def ask(url: str, timeout: float, body: dict | None = None, key: str = "",
        headers: t.Mapping[str, str] | None = None) -> tuple[int, bytes, t.Mapping[str, str]]:
    """(status, body, headers); status 0: no HTTP answer (refused, reset, timed out)."""
    sent = dict(headers or {})
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        sent["Content-Type"] = "application/json"
    if key:
        sent["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url, data=data, headers=sent, method="POST" if data else "GET")
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers or {})
    except (OSError, ValueError) as exc:
        return 0, f"{type(exc).__name__}: {exc}".encode(), {}


class Supervisor:
    def __init__(self, config: t.Mapping[str, t.Any]) -> None:
        self.config = config
        self.node = str(config["node"])
        self.role = str(config["role"])
        self.ranks = list(config.get("ranks") or [])
        # whether this node restarts its ranks (under Ray the worker's rank is Ray's container, which Docker restarts)
        self.acts = bool(config.get("acts", True))
        self.settings = decisions.Settings.of(config.get("settings") or {})
        self.docker = Docker(str(config.get("docker_socket") or "/var/run/docker.sock"))
        with open(config["secret_file"], "rb") as handle:
            self.secret = handle.read().strip()
        self.state_file = str(config["state_file"])
        self.state = self._load()
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.previous: decisions.Check | None = None
        self.said: tuple[t.Any, ...] | None = None

    # -- the record
    def _load(self) -> dict[str, t.Any]:
        try:
            with open(self.state_file, encoding="utf-8") as handle:
                document = json.load(handle)
            if isinstance(document, dict) and document.get("version") == decisions.RECORD_VERSION \
                    and document.get("epoch"):
                return document
        except (OSError, ValueError):
            pass
        return decisions.new_state(secrets.token_hex(8))

    def save(self) -> None:
        document = dict(self.state, node=self.node, role=self.role, interval=self.settings.interval,
                        written=time.time())
        temporary = f"{self.state_file}.tmp"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=1, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.state_file)

    # -- this node's ranks
    def local_ranks(self) -> dict[str, dict[str, str]]:
        found = {}
        for name in self.ranks:
            try:
                state, started = self.docker.state(name)
            except OSError as exc:
                state, started = f"unknown (Docker: {exc})", ""
            found[name] = {"state": state, "started": started}
        return found

    def act(self, move: str) -> dict[str, list[str]]:
        """Restart or stop this node's ranks; each rank's last log lines from before."""
        logs = {}
        for name in self.ranks:
            try:
                logs[f"{self.node}/{name}"] = self.docker.logs(name)
                status = self.docker.restart(name) if move == "restart" else self.docker.stop(name)
                log(f"{move} {name}: Docker answered {status}")
            except OSError as exc:
                log(f"{move} {name} failed: {exc}")
        return logs

    # -- the leader
    def peers(self) -> dict[str, t.Any]:
        """Every follower's ranks: {"node/container": (state, started)}, or "silent: why" for a follower that did
        not answer, whose answer was not signed with the secret, or not to this nonce."""
        found: dict[str, t.Any] = {}
        for node, address in sorted((self.config.get("followers") or {}).items()):
            nonce = secrets.token_hex(16)
            url = f"http://{_host(address)}:{int(self.config['port'])}/state?nonce={nonce}"
            status, body, headers = ask(url, timeout=min(10.0, self.settings.deadline))
            document = decisions.verified(self.secret, body, headers.get(SIGNATURE, "")) if status == 200 else None
            if document is not None and (document.get("role"), document.get("node")) != ("follower", node):
                document = None  # another node's signed answer (the leader's own, relayed): not this follower's
            if document is None or document.get("nonce") != nonce:
                why = "not signed with the cluster's secret" if status == 200 else body[:120].decode(errors="replace")
                found[f"{node}/*"] = (f"silent: {why}", "")
                continue
            for name, rank in (document.get("ranks") or {}).items():
                found[f"{node}/{name}"] = (str(rank.get("state")), str(rank.get("started")))
        return found

    def look(self) -> tuple[decisions.Check, dict[str, str], dict[str, t.Any]]:
        """One check, when each container the group's start starts was started (under Ray the head's vLLM
        alone: a worker's Ray container that Docker restarted is no start of the group), and the followers' answers."""
        now = time.time()
        ranks = {f"{self.node}/{name}": (rank["state"], rank["started"]) for name, rank in self.local_ranks().items()}
        peers = self.peers()
        ranks.update(peers)
        states = {name: value[0] for name, value in ranks.items()}
        starts = {name: value[1] for name, value in ranks.items()
                  if name not in peers or self.config.get("followers_act")}
        if any(state != "running" for state in states.values()):
            return decisions.Check(at=now, ranks=states), starts, peers
        url, deadline = str(self.config["url"]), self.settings.deadline
        health = ask(f"{url}/health", timeout=deadline)[0]
        metrics = ask(f"{url}/metrics", timeout=deadline)
        text = metrics[1].decode(errors="replace") if metrics[0] == 200 else ""
        completion = ""
        if health == 200:
            body = {"model": self.config["model"], "prompt": "Hello", "max_tokens": 1, "temperature": 0}
            status, answer, _headers = ask(f"{url}/v1/completions", timeout=deadline, body=body, key=self._key())
            completion = _completion(status, answer, deadline)
        after = ask(f"{url}/metrics", timeout=deadline) if completion != "ok" else (0, b"", {})
        check = decisions.Check(at=now, ranks=states, health=health, completion=completion,
                                tokens=decisions.metrics_value(text, "vllm:generation_tokens_total"),
                                running=decisions.metrics_value(text, "vllm:num_requests_running"),
                                tokens_after=decisions.metrics_value(after[1].decode(errors="replace"),
                                                                     "vllm:generation_tokens_total")
                                if after[0] == 200 else None)
        return check, starts, peers

    def waits_for(self, states: t.Mapping[str, str], peers: t.Mapping[str, t.Any]) -> tuple[str, ...]:
        """What the group cannot start without and this supervisor cannot start: a node whose supervisor is silent,
        a worker's Ray container not running, a node not alive in Ray's own table (under Ray: vLLM would wait for
        its placement for its whole start grace)."""
        found = sorted(name.split("/", 1)[0] if state.startswith("silent") else name
                       for name, state in states.items() if name in peers and state != "running"
                       and (state.startswith("silent") or not self.config.get("followers_act")))
        ray = self.config.get("ray_nodes") or {}
        if ray:
            alive = self.ray_alive(ray)
            if alive is None:
                # no table to wait on (a dashboard that does not run): a restart that cannot place its ranks fails
                # and counts toward the cap instead of waiting forever
                log("Ray's node table did not answer (the head's dashboard): restarting without it")
            else:
                found += [f"{address} in Ray" for address in ray.get("expected", []) if address not in alive]
        return tuple(found)

    def ray_alive(self, ray: t.Mapping[str, t.Any]) -> set[str] | None:
        """The addresses of the nodes alive in Ray's table (its dashboard's API on the head), None without answer."""
        token = ""
        try:
            with open(str(ray.get("token_file") or ""), encoding="utf-8") as handle:
                token = handle.read().strip()
        except OSError:
            pass  # no Ray token authentication on this cluster
        status, body, _headers = ask(str(ray["url"]), timeout=self.settings.deadline, key=token)
        try:
            rows = json.loads(body)["data"]["result"]["result"] if status == 200 else None
        except (ValueError, KeyError, TypeError):
            rows = None
        if not isinstance(rows, list):
            return None
        return {str(row.get("node_ip")) for row in rows if isinstance(row, dict) and row.get("state") == "ALIVE"}

    def _key(self) -> str:
        path = str(self.config.get("key_file") or "")
        if not path:
            return ""
        try:
            with open(path, encoding="utf-8") as handle:
                return handle.read().strip()
        except OSError:
            return ""

    def paused(self) -> bool:
        """Whether an Ansible run asked it to stand back (site.yml's first play writes the flag, its last removes it);
        a flag older than the start grace and an hour is a failed run's, and ignored."""
        try:
            age = time.time() - os.stat(os.path.join(os.path.dirname(self.state_file), PAUSE_FLAG)).st_mtime
        except OSError:
            return False
        return age < self.settings.start_grace + 3600

    def lead_once(self) -> None:
        paused = self.paused()
        if paused != bool(self.state.get("paused")):
            log("an Ansible run changes the cluster: standing back" if paused else "the Ansible run ended: watching")
        with self.lock:
            self.state["paused"] = paused
        if paused:
            with self.lock:
                self.save()
            return
        check, starts, peers = self.look()
        failed = decisions.failure(check, self.previous, self.settings)
        if failed:
            # what a restart would wait for: asked only of a failed check (Ray's node table is one more request)
            check = check._replace(waits_for=self.waits_for(check.ranks, peers))
        self.previous = check
        with self.lock:
            state, move = decisions.decide(self.state, check, starts, failed, self.settings)
            self.state = state
        said = (failed, state["phase"]) if failed and state["phase"] == "gave_up" else None
        if failed and said != self.said:
            # given up, the same failure is said once, not every interval for as long as the cluster stays down
            log(f"check failed ({failed[0]}): {failed[1]}; {state['consecutive']} in a row, phase {state['phase']}"
                + (f"; {state['waiting']}" if state.get("waiting") and move == "none" else ""))
        self.said = said
        if move == "restart":
            log(f"restarting every rank (generation {state['generation']}): {failed[1] if failed else ''}")
            self.save()  # the generation first: the followers restart theirs as this one restarts its own
            logs = self.act("restart")
            with self.lock:
                self.state["last_restart"] = dict(self.state.get("last_restart") or {}, logs=logs)
        elif move == "give_up":
            log(f"giving up after {len(state['restarts'])} restarts: stopping every rank; {failed[1] if failed else ''}")
            self.save()
            logs = self.act("stop")
            with self.lock:
                self.state["gave_up"] = dict(self.state.get("gave_up") or {}, logs=logs)
        with self.lock:
            self.save()

    # -- a follower
    def follow_once(self) -> None:
        url = f"http://{_host(str(self.config['leader']))}:{int(self.config['port'])}/state"
        status, body, headers = ask(url, timeout=10.0)
        document = decisions.verified(self.secret, body, headers.get(SIGNATURE, "")) if status == 200 else None
        if document is not None and document.get("role") != "leader":
            document = None  # a follower's own signed answer relayed back
        with self.lock:
            self.state["checks"] = self.state.get("checks", 0) + 1
            if document is None:
                self.state["failures"] = self.state.get("failures", 0) + 1
                self.state["last_check"] = {"at": time.time(), "ok": False,
                                            "reason": f"the leader at {url} answered {status or body[:120]!r}"}
                self.save()
                return
            self.state["last_check"] = {"at": time.time(), "ok": True, "reason": ""}
            move, acted = decisions.follow(self.state.get("acted") if isinstance(self.state.get("acted"), dict)
                                           else None, document)
            if not self.acts:
                move = "none"  # a Ray container: Docker restarts it, the leader restarts the group through vLLM
            self.state["acted"] = acted
        if move != "none":
            log(f"the leader's generation {acted['generation']} (epoch {acted['epoch']}): {move} this node's ranks")
            logs = self.act(move)
            with self.lock:
                self.state["restarts_total"] = self.state.get("restarts_total", 0) + (move == "restart")
                self.state["last_restart" if move == "restart" else "gave_up"] = {
                    "at": time.time(), "logs": logs, "generation": acted["generation"],
                    "reason": "the leader restarted the group" if move == "restart" else "the leader gave up"}
        with self.lock:
            self.save()

    # -- what it serves
    def answer(self, path: str) -> tuple[int, bytes, dict[str, str]]:
        parsed = urllib.parse.urlsplit(path)
        if parsed.path == "/metrics":
            with self.lock:
                text = decisions.metrics_text(self.state, self.role, self.node)
            return 200, text.encode(), {"Content-Type": "text/plain; version=0.0.4"}
        if parsed.path == "/state":
            nonce = (urllib.parse.parse_qs(parsed.query).get("nonce") or [""])[0][:64]
            with self.lock:
                document = {"node": self.node, "role": self.role, "nonce": nonce, "epoch": self.state.get("epoch"),
                            "generation": self.state.get("generation", 0), "desired": self.state.get("desired"),
                            "paused": bool(self.state.get("paused"))}
            if self.role == "follower":
                document["ranks"] = self.local_ranks()
            body, signature = decisions.signed(self.secret, document)
            return 200, body, {"Content-Type": "application/json", SIGNATURE: signature}
        return 404, b"not found\n", {"Content-Type": "text/plain"}

    def serve(self) -> http.server.ThreadingHTTPServer:
        supervisor = self

        class Handler(http.server.BaseHTTPRequestHandler):
            # a peer that opens a connection and sends nothing holds a thread this long at most
            timeout = 10

            def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
                status, body, headers = supervisor.answer(self.path)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: t.Any) -> None:  # pylint: disable=arguments-differ
                return None

        server_class = http.server.ThreadingHTTPServer
        if ":" in str(self.config["listen"]):
            server_class = type("Server6", (http.server.ThreadingHTTPServer,), {"address_family": socket.AF_INET6})
        server = server_class((str(self.config["listen"]), int(self.config["port"])), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        return server

    def run(self) -> None:
        server = self.serve()
        every = self.settings.interval if self.role == "leader" else min(FOLLOW_POLL, self.settings.interval)
        log(f"{self.role} on {self.node}: ranks {', '.join(self.ranks) or 'none'}, every {every} s, "
            f"listening on {self.config['listen']}:{self.config['port']}")
        while not self.stopping.is_set():
            began = time.monotonic()
            try:
                self.lead_once() if self.role == "leader" else self.follow_once()
            except Exception as exc:  # pylint: disable=broad-exception-caught
                # one bad round (Docker restarting, a full disk) must not end the supervisor
                log(f"round failed: {type(exc).__name__}: {exc}")
            # standing back, it looks for the flag's end often: the group an Ansible run started is checked at once
            wait = min(every, FOLLOW_POLL) if self.state.get("paused") else every
            self.stopping.wait(max(0.0, wait - (time.monotonic() - began)))
        server.shutdown()


def _completion(status: int, answer: bytes, deadline: float) -> str:
    if status == 0:
        return "timeout" if b"timed out" in answer else answer[:200].decode(errors="replace")
    if status != 200:
        return f"answered {status}: {answer[:200].decode(errors='replace')}"
    try:
        tokens = int(json.loads(answer).get("usage", {}).get("completion_tokens") or 0)
    except (ValueError, AttributeError):
        tokens = 0
    return "ok" if tokens > 0 else f"no token within {deadline} s"


def _host(address: str) -> str:
    return f"[{address}]" if ":" in address and not address.startswith("[") else address


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as handle:
        config = json.load(handle)
    supervisor = Supervisor(config)
    signal.signal(signal.SIGTERM, lambda *ignored: supervisor.stopping.set())
    signal.signal(signal.SIGINT, lambda *ignored: supervisor.stopping.set())
    supervisor.run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
