"""Integration tests run real ansible-playbook against the running lab: `make lab`, then `make integration K=...`
(`make test` runs them all on the lab it creates, in the order pytest_collection_modifyitems gives)."""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import urllib.error
import urllib.request

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
LAB_INVENTORY = REPO / "inventories" / "lab"
PRELAUNCH_CHECK = "Check the cluster can host this model before loading it (F9, F2)"
VALIDATE_CHECK = "Wait for every inventory host in Ray's node table, then check it (bounded by cluster_validate_timeout)"
HEAD_URL = "http://198.18.0.180:8000"  # vLLM's API on the head's management address, as a client reaches it

# What a group's playbooks are given so that they do not look at what the group beside it changes (tests/suite runs
# two groups at once): the weights group puts strangers and leftovers on the weights port, which every other
# preflight checks on the head (a runtime-image test once failed on "vllm_cluster_weights_port=29510 already in use").
# Neither group measures the link: each changes what the gate's record was measured with (an image, the env file), so
# every run of theirs would measure again (CI run 11: +70 s), two groups at once on one rendezvous port, over a
# link the other group loads; test_link_gate.py proves the gate.
_NO_GATE = ["-e", "vllm_cluster_link_gate=off"]
GROUP_EXTRA_VARS = {
    "runtime-image": ["-e", "vllm_cluster_weights_port=29511", *_NO_GATE],
    "weights": _NO_GATE,
}


# Where the tests' own programs listen (test_link_gate runs the gate's program on spark-1's loopback; torch's store
# behind it listens on every address): not a port of the cluster's, which the port-registry check beside it in the
# read-only stage (two at a time) must know. CI for stop 44 failed on it (test_firewall's registry check).
TEST_PROGRAM_PORT = 29590
COMPONENT = "inferops.vllm_cluster.component"
# The link gate's containers: the collection's own (link-gate) and test_link_gate.py's runs of its program.
MEASURING_COMPONENTS = ("link-gate", "link-gate-test")


class Lab:
    """The running lab: run playbooks against variants of its inventory, and look inside its nodes."""

    def __init__(self, extra_args: list[str] | None = None) -> None:
        self.hosts = yaml.safe_load((LAB_INVENTORY / "hosts.yml").read_text())
        self.extra_args = list(extra_args or [])  # before each test's own, which win

    def node(self, host: str, *argv: str, check: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess:
        command = ["docker", "exec", *(["-i"] if stdin is not None else []), f"inferops-lab-{host}", *argv]
        return subprocess.run(command, text=True, capture_output=True, check=check, input=stdin)

    def containers(self) -> dict[str, list[str]]:
        """Every inner container of every node, with its ID and start time: what 'unchanged' means. The link gate's
        measuring containers (run and removed within a run; a read-only test beside this one may be measuring) are
        not the cluster's: gate_leftovers() looks for them."""
        result = {}
        for host in ("spark-1", "spark-2"):
            out = self.node(host, "docker", "ps", "-aq", "--no-trunc").stdout.split()
            details = json.loads(self.node(host, "docker", "inspect", *out, check=False).stdout or "[]") if out else []
            result[host] = sorted(f"{c['Name']} {c['Id']} {c['State']['StartedAt']} {c['State']['Status']}"
                                  for c in details
                                  if (c["Config"].get("Labels") or {}).get(COMPONENT) not in MEASURING_COMPONENTS)
        return result

    def gate_leftovers(self) -> dict[str, list[str]]:
        """The link gate's containers still on the nodes (none once a run is over)."""
        return {host: sorted(container for component in MEASURING_COMPONENTS
                             for container in self.node(host, "docker", "ps", "-aq", "--filter",
                                                        f"label={COMPONENT}={component}").stdout.split())
                for host in ("spark-1", "spark-2")}

    def playbook(self, tmp_path: pathlib.Path, *args: str, hosts: dict | None = None, playbook: str = "site.yml"):
        """Run a playbook against the lab inventory, or against a modified copy of its hosts."""
        inventory = LAB_INVENTORY
        if hosts is not None:
            inventory = tmp_path / "inventory"
            inventory.mkdir(exist_ok=True)  # a test may have put credentials there first
            (inventory / "hosts.yml").write_text(yaml.safe_dump(hosts))
            (inventory / "group_vars").symlink_to(LAB_INVENTORY / "group_vars")
        env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
        return subprocess.run(
            ["ansible-playbook", str(REPO / playbook), "-i", str(inventory), *self.extra_args, *args],
            cwd=REPO, env=env, text=True, capture_output=True, timeout=900, check=False,
        )

    def start_playbook(self, *args: str, playbook: str = "site.yml") -> subprocess.Popen:
        """A playbook against the lab inventory, in the background: a test watches or breaks the nodes while it runs
        (its output unbuffered, so that the test can follow it line by line)."""
        env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
                   PYTHONUNBUFFERED="1")
        return subprocess.Popen(["ansible-playbook", str(REPO / playbook), "-i", str(LAB_INVENTORY), *self.extra_args,
                                 *args],
                                cwd=REPO, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def expect_failure(self, tmp_path: pathlib.Path, expected: list[str], *args: str, hosts: dict | None = None) -> str:
        """Run site.yml expecting it to fail with every string of `expected` in its output."""
        result = self.playbook(tmp_path, *args, hosts=hosts)
        output = result.stdout + result.stderr
        assert result.returncode != 0, output[-3000:]
        missing = [text for text in expected if text not in output]
        assert not missing, f"missing {missing} in:\n{output[-4000:]}"
        return output


def lab_settings() -> dict:
    """The collection's settings for the lab (inventories/lab/group_vars/all/cluster.yml), as the inventory writes them."""
    return yaml.safe_load((LAB_INVENTORY / "group_vars" / "all" / "cluster.yml").read_text())


def api_key() -> str:
    return lab_settings()["vllm_server_api_key"]


def get_models(key: str | None) -> tuple[int, dict]:
    """GET /v1/models on the head with this key (None: no Authorization header): the status and the answer."""
    request = urllib.request.Request(f"{HEAD_URL}/v1/models", headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, {}


def flat(output: str) -> str:
    """A playbook's output with the callback's line wrapping undone."""
    return " ".join(output.split())


def task_outcome(output: str, task: str, host: str) -> str:
    """What the named task did on host in a playbook's output: ok, changed, skipping, failed..."""
    header = output.find(f" : {task}]")
    assert header >= 0, f"task {task!r} not in the output:\n{output[-3000:]}"
    # only this task's own lines, up to the next task's header
    following = output.find("\nTASK [", header)
    section = output[header:following if following >= 0 else len(output)]
    match = re.search(rf"^(ok|changed|skipping|fatal|failed): \[{re.escape(host)}\b", section, re.M)
    assert match, f"no result for {host} in task {task!r}:\n{section[-2000:]}"
    return match.group(1)


def pytest_addoption(parser):
    parser.addoption("--group", default="", metavar="NAME",
                     help="only the tests marked grouped(NAME) that are not readonly (tests/suite/side-by-side runs two "
                          "groups at once)")


def pytest_collection_modifyitems(config, items):
    """Tests that change nothing first; then the grouped ones (a group changes only what its own tests look at);
    then those that change the nodes and put them back; last those that break a layer of the cluster and heal it
    (restarts_layers), so a heal that fails harms no test after it. File order within each. tests/suite/run runs
    the read-only ones two at a time (`-n 2 -m readonly`), two groups side by side (`--group NAME` each), the rest
    alone. (Not xdist's loadgroup: with pytest 9 it no longer keeps a group on one worker.)"""
    wanted = config.getoption("--group")
    if wanted:
        chosen = [item for item in items if _group_name(item) == wanted and not item.get_closest_marker("readonly")]
        config.hook.pytest_deselected(items=[item for item in items if item not in chosen])
        items[:] = chosen

    def group(item) -> int:
        if item.get_closest_marker("readonly"):
            return 0
        if item.get_closest_marker("grouped"):
            return 1
        return 3 if item.get_closest_marker("restarts_layers") else 2
    items.sort(key=group)


def _group_name(item) -> str:
    marker = item.get_closest_marker("grouped")
    return str(marker.args[0]) if marker and marker.args else ""


@pytest.fixture()
def unchanged(lab):
    """Fails the test when any container of any node was created, changed or restarted during it."""
    before = lab.containers()
    yield
    assert lab.containers() == before, "a failed run must not create, change or restart any container"


@pytest.fixture(scope="session")
def lab(request) -> Lab:
    probe = subprocess.run(["docker", "inspect", "inferops-lab-spark-1"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.fail("the lab is not up: run `make lab` first (`make test` makes its own)")
    return Lab(GROUP_EXTRA_VARS.get(request.config.getoption("--group"), []))
