"""The copy from the head's staging server, run for real on loopback: whole files, a resumed
partial file, a file that does not verify."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import socket
import subprocess
import sys

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_fetch import FetchError, fetch_files
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_paths import Untrusted


SERVER = pathlib.Path(__file__).resolve().parents[4] / "roles" / "model_stage" / "files" / "weights_server.py"


@pytest.fixture()
def head(tmp_path):
    """The head's own staging server (roles/model_stage/files/weights_server.py) on loopback."""
    source = tmp_path / "head"
    (source / "sub").mkdir(parents=True)
    contents = {"config.json": b"{}", "sub/model.safetensors": bytes(range(256)) * 4000}
    for name, content in contents.items():
        (source / name).write_bytes(content)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    manifest = {name: {"size": len(c), "sha256": hashlib.sha256(c).hexdigest()} for name, c in contents.items()}
    server = subprocess.Popen([sys.executable, str(SERVER), "127.0.0.1", str(port), str(source), "30", "120",
                               json.dumps(manifest)], stdout=subprocess.PIPE, text=True)
    assert server.stdout.readline().startswith("serving")
    yield f"http://127.0.0.1:{port}", manifest, contents
    server.kill()
    server.wait()


def test_every_file_copied_and_verified_with_progress(head, tmp_path):
    url, manifest, contents = head
    progress = tmp_path / "progress.json"
    result = fetch_files(url, manifest, str(tmp_path / "node"), progress_file=str(progress))
    assert result["copied"] == sorted(manifest)
    assert result["bytes"] == sum(len(c) for c in contents.values())
    for name, content in contents.items():
        assert (tmp_path / "node" / name).read_bytes() == content
        assert not (tmp_path / "node" / (name + ".part")).exists()
    state = json.loads(progress.read_text())
    assert (state["done"], state["files"], state["bytes"], state["total"]) == (2, 2, result["bytes"], result["bytes"])


def test_an_interrupted_copy_resumes_where_it_stopped(head, tmp_path):
    url, manifest, contents = head
    name = "sub/model.safetensors"
    (tmp_path / "node" / "sub").mkdir(parents=True)
    (tmp_path / "node" / (name + ".part")).write_bytes(contents[name][:1000])
    result = fetch_files(url, {name: manifest[name]}, str(tmp_path / "node"))
    assert result["bytes"] == len(contents[name]) - 1000
    assert (tmp_path / "node" / name).read_bytes() == contents[name]


def test_a_file_that_does_not_verify_is_removed_and_named(head, tmp_path):
    url = head[0]
    wrong = {"config.json": {"size": 2, "sha256": "0" * 64}}
    with pytest.raises(FetchError, match=r"config.json: 2 bytes, sha256 .* but the head's has 2 bytes, sha256 000000000000"):
        fetch_files(url, wrong, str(tmp_path / "node"))
    assert not (tmp_path / "node" / "config.json").exists()
    assert not (tmp_path / "node" / "config.json.part").exists()


def test_an_unreachable_head_is_named_with_what_was_copied(tmp_path):
    with pytest.raises(FetchError, match=r"config.json: .* \(after 0 of 2 bytes; a re-run resumes\)"):
        fetch_files("http://127.0.0.1:9", {"config.json": {"size": 2, "sha256": "x"}}, str(tmp_path / "node"), timeout=2)


def test_copies_below_the_cache_root_walk_every_folder_without_following_a_link(head, tmp_path):
    """A worker's snapshot folder swapped for a link (a container with the cache mounted read-write, during a copy
    that lasts hours) must turn no root write into one elsewhere (#31)."""
    url, manifest, contents = head
    cache = tmp_path / "cache"
    elsewhere = tmp_path / "etc"
    elsewhere.mkdir()
    (cache / "hub" / "models--org--m" / "snapshots").mkdir(parents=True)
    dest = cache / "hub" / "models--org--m" / "snapshots" / ("c" * 40)
    dest.symlink_to(elsewhere)
    with pytest.raises(Untrusted, match=r"snapshots/c{40} is a symbolic link"):
        fetch_files(url, manifest, str(dest), root=str(cache))
    assert list(elsewhere.iterdir()) == []
    dest.unlink()
    result = fetch_files(url, manifest, str(dest), root=str(cache))
    assert result["copied"] == sorted(manifest) and (dest / "config.json").read_bytes() == contents["config.json"]


@pytest.mark.parametrize("plant", ["fifo", "link"])
def test_a_pipe_or_a_link_where_a_part_file_goes_is_refused_not_written(head, tmp_path, plant):
    url, manifest = head[0], head[1]
    node = tmp_path / "node"
    node.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    if plant == "fifo":
        os.mkfifo(node / "config.json.part")  # root would block on it, or write into a device in its place
    else:
        (node / "config.json.part").symlink_to(victim)
    with pytest.raises(FetchError, match=r"config.json.part is a (pipe|symbolic link)"):
        fetch_files(url, {"config.json": manifest["config.json"]}, str(node), timeout=5)
    assert victim.read_text() == "untouched"
