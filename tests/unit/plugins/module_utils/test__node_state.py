"""One read of a node, against real files: kinds, modes and hashes by lstat, links never followed, records parsed
only when they are the collection's JSON; and the container's description without its environment."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.filter.files_to_write import files_to_write
from ansible_collections.inferops.vllm_cluster.plugins.filter.paths_to_fix import paths_to_fix
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._docker_cli import DockerError
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._node_state import (
    RECORD_LIMIT, describe_container, describe_file, docker_questions, needs_fixing, read, read_record)

UID, GID = os.getuid(), os.getgid()


def test_a_regular_file_with_its_hash_mode_and_owner(tmp_path):
    token = tmp_path / "ray_auth_token"
    token.write_text("secret")
    token.chmod(0o600)
    assert describe_file(str(token)) == {"exists": True, "kind": "file", "mode": "0600", "uid": UID, "gid": GID,
                                         "size": 6, "sha256": hashlib.sha256(b"secret").hexdigest()}


def test_a_link_is_described_as_one_and_its_target_is_not_read(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("the head's secrets")
    (tmp_path / "node.env").symlink_to(target)
    described = describe_file(str(tmp_path / "node.env"))
    assert described["kind"] == "link" and described["sha256"] == ""


@pytest.mark.parametrize("case, make, kind", [
    ("a directory", lambda p: p.mkdir(), "directory"),
    ("a fifo (a read would block)", os.mkfifo, "other"),
])
def test_other_kinds_have_no_hash(tmp_path, case, make, kind):
    make(tmp_path / "x")
    described = describe_file(str(tmp_path / "x"))
    assert (described["kind"], described["sha256"]) == (kind, ""), case


def test_a_missing_path(tmp_path):
    assert describe_file(str(tmp_path / "nope")) == {"exists": False}


@pytest.mark.parametrize("case, content, expected", [
    ("the collection's record", json.dumps({"id": "c1", "digest": "d"}), {"id": "c1", "digest": "d"}),
    ("not JSON", "id=c1", None),
    ("too large to be one", json.dumps({"pad": "x" * RECORD_LIMIT}), None),
])
def test_records(tmp_path, case, content, expected):
    record = tmp_path / "record.json"
    record.write_text(content)
    assert read_record(str(record)) == expected, case


def test_a_record_that_is_a_link_is_not_read(tmp_path):
    target = tmp_path / "planted.json"
    target.write_text(json.dumps({"id": "c1", "digest": "d"}))
    (tmp_path / "record.json").symlink_to(target)
    assert read_record(str(tmp_path / "record.json")) is None


def test_a_container_without_its_environment():
    document = {"Id": "c1", "Image": "sha256:img", "State": {"Status": "running", "Running": True,
                                                             "StartedAt": "2026-12-05T21:40:02Z", "ExitCode": 0},
                "Config": {"Env": ["HF_TOKEN=hf_secret"], "Labels": {"inferops.vllm_cluster.node": "spark-1"}},
                "HostConfig": {"RestartPolicy": {"Name": "unless-stopped"}}}
    described = describe_container(document)
    assert "hf_secret" not in json.dumps(described)
    assert described["running"] and described["id"] == "c1" and described["restart_policy"] == "unless-stopped"
    assert describe_container(None) == {"exists": False, "status": "absent", "running": False}


class FakeClient:
    def __init__(self, down=False):
        self.down = down

    def inspect(self, name):
        if self.down:
            raise DockerError("docker did not answer")
        return {"Id": "c1", "State": {"Running": True}} if name == "here" else None

    def image_id(self, image):
        return "sha256:img" if image == "lab/runtime:1" else ""


def test_one_read_of_everything_asked(tmp_path):
    state = read(FakeClient(), ["here", "gone"], ["lab/runtime:1", "lab/runtime:2"], [str(tmp_path)], [], lambda: 7.0)
    assert state["containers"]["here"]["running"] and not state["containers"]["gone"]["exists"]
    assert state["images"] == {"lab/runtime:1": "sha256:img", "lab/runtime:2": ""}
    assert state["files"][str(tmp_path)]["kind"] == "directory" and state["clock"] == 7.0


def test_an_engine_that_does_not_answer_is_an_error_and_files_need_none(tmp_path):
    with pytest.raises(DockerError):
        read(FakeClient(down=True), ["here"], [], [], [], lambda: 0.0)
    assert read(None, [], [], [str(tmp_path)], [], lambda: 0.0)["files"][str(tmp_path)]["exists"]


@pytest.mark.parametrize("case, found, fix", [
    ("as wanted", {"exists": True, "kind": "directory", "mode": "0700", "uid": 0, "gid": 0}, False),
    ("missing", {"exists": False}, True),
    ("another mode", {"exists": True, "kind": "directory", "mode": "0755", "uid": 0, "gid": 0}, True),
    ("another owner", {"exists": True, "kind": "directory", "mode": "0700", "uid": 1000, "gid": 0}, True),
    ("a link where a directory belongs", {"exists": True, "kind": "link", "mode": "0777", "uid": 0, "gid": 0}, True),
    ("not read at all", None, True),
])
def test_needs_fixing(case, found, fix):
    assert needs_fixing(found, "directory", "0700") is fix, case


def test_paths_to_fix_keeps_the_order_and_the_entries():
    wanted = [{"path": "/etc/c", "mode": "0700"}, {"path": "/var/cache/hf", "mode": "0755"}, {"path": "/tmp/ray", "mode": "0777"}]
    node = {"files": {"/etc/c": {"exists": True, "kind": "directory", "mode": "0700", "uid": 0, "gid": 0},
                      "/var/cache/hf": {"exists": False},
                      "/tmp/ray": {"exists": True, "kind": "directory", "mode": "0755", "uid": 0, "gid": 0}}}
    assert paths_to_fix(wanted, node) == wanted[1:]


def test_python_modules_are_imported_and_a_broken_one_is_not_importable(tmp_path, monkeypatch):
    (tmp_path / "broken_probe_module.py").write_text("raise TypeError('an incompatible urllib3')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    state = read(None, [], [], [], [], lambda: 0.0, ["json", "no_such_module_anywhere", "no.such.parent", "broken_probe_module"])
    assert state["python_modules"] == {"json": True, "no_such_module_anywhere": False, "no.such.parent": False,
                                       "broken_probe_module": False}


def test_paths_are_read_where_they_point_and_keyed_as_given(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "vllm.tar").write_text("archive")
    state = read(None, [], [], ["~/vllm.tar", "$HOME/vllm.tar"], [], lambda: 0.0)
    assert state["files"]["~/vllm.tar"]["kind"] == "file" and state["files"]["$HOME/vllm.tar"]["kind"] == "file"


ROOT_FILE = {"exists": True, "kind": "file", "mode": "0600", "uid": 0, "gid": 0,
             "sha256": hashlib.sha256("tok\u00e9n".encode()).hexdigest()}


@pytest.mark.parametrize("case, found, content, write", [
    ("as wanted (the content's UTF-8, as copy writes it)", ROOT_FILE, "tok\u00e9n", False),
    ("another content", ROOT_FILE, "other", True),
    ("another mode", dict(ROOT_FILE, mode="0644"), "tok\u00e9n", True),
    ("a link where the file belongs", dict(ROOT_FILE, kind="link", sha256=""), "tok\u00e9n", True),
    ("missing", {"exists": False}, "tok\u00e9n", True),
])
def test_files_to_write(case, found, content, write):
    wanted = [{"dest": "/etc/c/key", "content": content, "mode": "0600", "secret": True}]
    assert files_to_write(wanted, {"files": {"/etc/c/key": found}}) == (wanted if write else []), case


class EnvClient:
    """An engine with one container whose environment holds a pinned name otherwise and a secret beside it."""

    def __init__(self):
        self.asked = []

    def inspect(self, name):
        self.asked.append(name)
        if name != "vllm-cluster-ray-head":
            return None
        return {"Id": "c1", "State": {"Running": True},
                "Config": {"Env": ["GLOO_SOCKET_IFNAME=eth0", "NCCL_SOCKET_IFNAME=ic0", "HF_TOKEN=hf_secret_value"]}}


@pytest.mark.parametrize("case, container, pinned, found", [
    ("a pinned name held otherwise", "vllm-cluster-ray-head",
     {"GLOO_SOCKET_IFNAME": "ic0", "NCCL_SOCKET_IFNAME": "ic0"},
     {"exists": True, "drift": ["GLOO_SOCKET_IFNAME=eth0 (pinned: ic0)"]}),
    ("a pinned name missing", "vllm-cluster-ray-head", {"VLLM_HOST_IP": "198.18.1.12"},
     {"exists": True, "drift": ["VLLM_HOST_IP=(unset) (pinned: 198.18.1.12)"]}),
    ("every pinned name as pinned", "vllm-cluster-ray-head", {"NCCL_SOCKET_IFNAME": "ic0"},
     {"exists": True, "drift": []}),
    ("no such container", "vllm-cluster-vllm", {"NCCL_SOCKET_IFNAME": "ic0"}, {"exists": False, "drift": []}),
])
def test_pinned_env_names_only_the_pinned_names_held_otherwise(case, container, pinned, found):
    client = EnvClient()
    state = read(client, [container], [], [], [], lambda: 0.0, (), {container: pinned})
    assert state["pinned_env"] == {container: found}, case
    # one inspect for both questions, and the secret beside the pinning is nowhere in what is returned
    assert client.asked == [container] and "hf_secret_value" not in repr(state), case


def test_a_secret_file_is_described_but_never_hashed(tmp_path):
    token = tmp_path / "hf_token"
    token.write_text("hf_not_a_real_token")
    token.chmod(0o600)
    state = read(None, [], [], [str(tmp_path)], [], lambda: 0.0, secret_files=[str(token), str(tmp_path / "none")])
    described = state["files"][str(token)]
    assert described["exists"] and described["kind"] == "file" and described["mode"] == "0600"
    assert described["sha256"] == "" and state["files"][str(tmp_path / "none")] == {"exists": False}
    assert state["files"][str(tmp_path)]["kind"] == "directory"


# With the engine asked first (node_state's `engine`), Docker is read only where it answered: F26 is the caller's.
@pytest.mark.parametrize("case, engine, asked", [
    ("not asked", None, (["ray"], ["img"], {"ray": {"A": "1"}})),
    ("it answered", {"rc": 0, "stdout": "28.5.1\n", "stderr": ""}, (["ray"], ["img"], {"ray": {"A": "1"}})),
    ("it did not", {"rc": 1, "stdout": "", "stderr": "Cannot connect to the Docker daemon"}, ([], [], {})),
    ("hung", {"rc": 124, "stdout": "", "stderr": ""}, ([], [], {})),
    ("no docker CLI", {"rc": None, "stdout": "", "stderr": "", "msg": "No such file or directory: docker"}, ([], [], {})),
])
def test_docker_is_read_only_where_the_engine_answered(case, engine, asked):
    assert docker_questions(engine, ["ray"], ["img"], {"ray": {"A": "1"}}) == asked, case
