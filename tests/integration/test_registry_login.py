"""A registry that wants a login: docker_runtime logs every node in with community.docker's login, through
the nodes' real dockerd, against a stand-in registry on each node's loopback (Docker talks plain HTTP to
127.0.0.0/8). The password appears in no output, even at -vvv, and a wrong one fails naming registry and user."""

from __future__ import annotations

import json

import pytest

REGISTRY = "127.0.0.1:5099"
USER, PASSWORD = "puller", "reg-pw-51c7"

# Registry API v2's version check, behind HTTP basic authentication: all `docker login` asks.
STAND_IN = f"""
import base64, http.server
GOOD = "Basic " + base64.b64encode(b"{USER}:{PASSWORD}").decode()
class Registry(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.headers.get("Authorization") == GOOD:
            self.send_response(200)
        else:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="stand-in"')
        self.send_header("Docker-Distribution-API-Version", "registry/2.0")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{{}}")
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", 5099), Registry).serve_forever()
"""

# Changes the nodes only where the tests of its own group look: a group's tests run one after another, beside
# another group's (tests/suite/run: tests/suite/side-by-side, pytest --group NAME).
pytestmark = pytest.mark.grouped("runtime-image")


@pytest.fixture()
def registry(lab):
    pids = {}
    for host in ("spark-1", "spark-2"):
        lab.node(host, "sh", "-c", "cat > /tmp/inferops-stand-in-registry.py", stdin=STAND_IN)
        pids[host] = lab.node(host, "sh", "-c", "python3 /tmp/inferops-stand-in-registry.py >/dev/null 2>&1 & echo $!").stdout.strip()
    yield
    for host, pid in pids.items():
        lab.node(host, "kill", pid)
        lab.node(host, "docker", "logout", REGISTRY, check=False)
        lab.node(host, "rm", "-f", "/tmp/inferops-stand-in-registry.py")


def login(password: str) -> str:
    return json.dumps({"vllm_cluster_registry_login": {"registry": REGISTRY, "username": USER, "password": password}})


def test_every_node_logs_in_and_the_password_stays_out_of_output(lab, tmp_path, registry, unchanged):
    result = lab.playbook(tmp_path, "-vvv", "--tags", "docker_runtime", "-e", login(PASSWORD))
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert PASSWORD not in output
    for host in ("spark-1", "spark-2"):
        config = json.loads(lab.node(host, "cat", "/root/.docker/config.json").stdout)
        assert REGISTRY in config["auths"], (host, config)


def test_a_wrong_password_fails_naming_registry_and_user_not_the_password(lab, tmp_path, registry, unchanged):
    output = lab.expect_failure(tmp_path, [f"Log in to the image's registry as {USER}@{REGISTRY}", "401"],
                                "--tags", "docker_runtime", "-e", login("wrong-pw-0d3e"))
    assert "wrong-pw-0d3e" not in output
