"""The copy from the head's staging server, run for real on loopback: whole files, a resumed partial file, a file
that does not verify, a process on the port that is not this run's server."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import socket
import threading

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_auth import NONCE, PROOF, sign
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_fetch import FetchError, fetch_files
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_paths import Untrusted

CONTENTS = {"config.json": b"{}", "sub/model.safetensors": bytes(range(256)) * 4000}


def test_every_file_copied_and_verified_with_progress_and_the_server_told(staging_head, tmp_path):
    head, manifest, contents = staging_head(CONTENTS)
    progress = tmp_path / "progress.json"
    result = fetch_files(head.url, manifest, str(tmp_path / "node"), progress_file=str(progress), secret="s3cret",
                         worker="spark-2")
    assert result["copied"] == sorted(manifest) and result["heard"] is True
    assert result["bytes"] == sum(len(c) for c in contents.values())
    for name, content in contents.items():
        assert (tmp_path / "node" / name).read_bytes() == content
        assert not (tmp_path / "node" / (name + ".part")).exists()
    state = json.loads(progress.read_text())
    assert (state["done"], state["files"], state["bytes"], state["total"]) == (2, 2, result["bytes"], result["bytes"])
    assert head.wait(5)["reason"] == "every worker is done" and head.result["done"] == ["spark-2"]


def test_an_interrupted_copy_resumes_where_it_stopped(staging_head, tmp_path):
    head, manifest, contents = staging_head(CONTENTS)
    name = "sub/model.safetensors"
    (tmp_path / "node" / "sub").mkdir(parents=True)
    (tmp_path / "node" / (name + ".part")).write_bytes(contents[name][:1000])
    result = fetch_files(head.url, {name: manifest[name]}, str(tmp_path / "node"), secret="s3cret")
    assert result["bytes"] == len(contents[name]) - 1000
    assert (tmp_path / "node" / name).read_bytes() == contents[name]


def test_a_part_with_wrong_bytes_before_the_resume_point_fails_verification(staging_head, tmp_path):
    """The kept bytes of a .part are hashed with the rest: a corrupt prefix is caught, not trusted."""
    head, manifest, contents = staging_head(CONTENTS)
    name = "sub/model.safetensors"
    (tmp_path / "node" / "sub").mkdir(parents=True)
    (tmp_path / "node" / (name + ".part")).write_bytes(b"x" * 1000)
    with pytest.raises(FetchError, match=r"model.safetensors: 1024000 bytes, sha256 .* but the head's has"):
        fetch_files(head.url, {name: manifest[name]}, str(tmp_path / "node"), secret="s3cret")
    assert not (tmp_path / "node" / (name + ".part")).exists()


def test_a_file_that_does_not_verify_is_removed_and_named(staging_head, tmp_path):
    head, manifest = staging_head(CONTENTS)[:2]
    wrong = {"config.json": {"size": 2, "sha256": "0" * 64}}
    with pytest.raises(FetchError, match=r"config.json: 2 bytes, sha256 .* but the head's has 2 bytes, sha256 000000000000"):
        fetch_files(head.url, wrong, str(tmp_path / "node"), secret="s3cret")
    assert not (tmp_path / "node" / "config.json").exists()
    assert not (tmp_path / "node" / "config.json.part").exists()


def test_an_unreachable_head_is_named_with_what_was_copied(tmp_path):
    with pytest.raises(FetchError, match=r"config.json: .* \(after 0 of 2 bytes; a re-run resumes\)"):
        fetch_files("http://127.0.0.1:9", {"config.json": {"size": 2, "sha256": "x"}}, str(tmp_path / "node"),
                    timeout=2, secret="s3cret")


def test_a_worker_with_another_secret_is_refused_and_writes_nothing(staging_head, tmp_path):
    head, manifest = staging_head(CONTENTS)[:2]
    with pytest.raises(FetchError, match=r"answered without this run's proof \(HTTP 403\)"):
        fetch_files(head.url, manifest, str(tmp_path / "node"), secret="another run's", timeout=5)
    assert not [path for path in (tmp_path / "node").rglob("*") if path.is_file() and path.stat().st_size]
    assert head.staging.refused >= 1 and head.staging.sent == 0


class Squatter(http.server.SimpleHTTPRequestHandler):
    """A user's `python3 -m http.server` on the staging port: it answers every GET with its own bytes."""

    def log_message(self, *args):
        pass

    def do_GET(self):
        body = b"{}"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_process_that_took_the_port_first_is_not_taken_for_the_server(tmp_path):
    """#31 item 4: before, any process listening on the port was copied from (its bytes refused only if they did
    not hash right); now the worker stops at the first answer without this run's proof and writes nothing."""
    squatter = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Squatter)
    threading.Thread(target=squatter.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{squatter.server_address[1]}"
        files = {"config.json": {"size": 2, "sha256": hashlib.sha256(b"{}").hexdigest()}}
        with pytest.raises(FetchError, match=r"answered without this run's proof \(HTTP 200\).*Nothing was written"):
            fetch_files(url, files, str(tmp_path / "node"), secret="s3cret", timeout=5)
        assert not (tmp_path / "node" / "config.json").exists()
        assert (tmp_path / "node" / "config.json.part").stat().st_size == 0
    finally:
        squatter.shutdown()
        squatter.server_close()


def test_copies_below_the_cache_root_walk_every_folder_without_following_a_link(staging_head, tmp_path):
    """A worker's snapshot folder swapped for a link during a copy that lasts hours must turn no root write into
    one elsewhere (#31)."""
    head, manifest, contents = staging_head(CONTENTS, workers=2)  # the refused copy also says it is done
    cache = tmp_path / "cache"
    elsewhere = tmp_path / "etc"
    elsewhere.mkdir()
    (cache / "hub" / "models--org--m" / "snapshots").mkdir(parents=True)
    dest = cache / "hub" / "models--org--m" / "snapshots" / ("c" * 40)
    dest.symlink_to(elsewhere)
    with pytest.raises(Untrusted, match=r"snapshots/c{40} is a symbolic link"):
        fetch_files(head.url, manifest, str(dest), root=str(cache), secret="s3cret")
    assert list(elsewhere.iterdir()) == []
    dest.unlink()
    result = fetch_files(head.url, manifest, str(dest), root=str(cache), secret="s3cret")
    assert result["copied"] == sorted(manifest) and (dest / "config.json").read_bytes() == contents["config.json"]


@pytest.mark.parametrize("plant", ["fifo", "link"])
def test_a_pipe_or_a_link_where_a_part_file_goes_is_refused_not_written(staging_head, tmp_path, plant):
    head, manifest = staging_head(CONTENTS)[:2]
    node = tmp_path / "node"
    node.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    if plant == "fifo":
        os.mkfifo(node / "config.json.part")  # root would block on it, or write into a device in its place
    else:
        (node / "config.json.part").symlink_to(victim)
    with pytest.raises(FetchError, match=r"config.json.part is a (pipe|symbolic link)"):
        fetch_files(head.url, {"config.json": manifest["config.json"]}, str(node), timeout=5, secret="s3cret")
    assert victim.read_text() == "untouched"


def test_nothing_listens_after_the_server_stops(staging_head):
    head = staging_head(CONTENTS, workers=1, startup=0.3)[0]
    assert head.wait(5)["reason"] == "no worker asked within 0 s"
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", head.port), timeout=2):
        pass


class Truncating(http.server.BaseHTTPRequestHandler):
    """This run's server (it holds the secret and proves it) whose answer stops halfway: it was stopped meanwhile."""

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = self.path
        self.send_response(200)
        self.send_header(PROOF, sign("s3cret", "server", self.headers[NONCE], "GET", path))
        self.send_header("Content-Length", "1000")
        self.end_headers()
        self.wfile.write(b"w" * 500)
        self.close_connection = True


def test_an_answer_that_ends_early_keeps_what_arrived_for_the_next_run(tmp_path):
    """Before, the .part of a copy whose server was stopped (a re-run ending an interrupted run's server) was taken
    for a wrong file and removed: up to a whole shard copied again."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Truncating)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        files = {"w.safetensors": {"size": 1000, "sha256": hashlib.sha256(b"w" * 1000).hexdigest()}}
        with pytest.raises(FetchError, match=r"w.safetensors: the head's server ended its answer after 500 of 1000 "
                                             r"bytes \(was it stopped\?\); kept, a re-run resumes"):
            fetch_files(f"http://127.0.0.1:{server.server_address[1]}", files, str(tmp_path / "node"),
                        secret="s3cret", timeout=5)
        assert (tmp_path / "node" / "w.safetensors.part").read_bytes() == b"w" * 500
    finally:
        server.shutdown()
        server.server_close()


def test_several_files_in_flight_each_verified(staging_head, tmp_path):
    contents = {f"model-{i}.safetensors": bytes([i]) * (300_000 + i) for i in range(6)}
    head, manifest = staging_head(contents)[:2]
    progress = tmp_path / "progress.json"
    result = fetch_files(head.url, manifest, str(tmp_path / "node"), secret="s3cret", streams=3,
                         progress_file=str(progress))
    assert result["copied"] == sorted(contents) and result["bytes"] == sum(len(c) for c in contents.values())
    for name, content in contents.items():
        assert (tmp_path / "node" / name).read_bytes() == content
    state = json.loads(progress.read_text())
    assert (state["done"], state["current"], state["finished"]) == (6, "", True)


def test_after_a_failure_no_further_file_is_started(staging_head, tmp_path):
    contents = {f"model-{i}.safetensors": bytes([i]) * (1000 - i) for i in range(5)}
    head, manifest = staging_head(contents)[:2]
    wrong = {**manifest, "model-0.safetensors": {**manifest["model-0.safetensors"], "sha256": "0" * 64}}
    with pytest.raises(FetchError, match=r"model-0.safetensors: 1000 bytes, sha256"):
        fetch_files(head.url, wrong, str(tmp_path / "node"), secret="s3cret", streams=1)
    # the largest file goes first and fails: nothing after it was asked for
    assert sorted(path.name for path in (tmp_path / "node").iterdir()) == []


def test_an_io_error_stops_new_files_and_the_progress_file_keeps_it(staging_head, tmp_path, monkeypatch):
    """A full disk or an I/O error in one stream (not a FetchError) is named, and no file starts after it."""
    contents = {f"model-{i}.safetensors": bytes([i]) * (2000 - i) for i in range(4)}
    head, manifest = staging_head(contents)[:2]
    synced = []

    def failing_sync(fd):
        synced.append(fd)
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fdatasync", failing_sync)
    progress = tmp_path / "progress.json"
    with pytest.raises(FetchError, match=r"model-0.safetensors: \[Errno 5\] Input/output error"):
        fetch_files(head.url, manifest, str(tmp_path / "node"), secret="s3cret", streams=1, progress_file=str(progress))
    assert len(synced) == 1  # the largest file failed; none after it started
    state = json.loads(progress.read_text())
    assert state["finished"] is True and "Input/output error" in state["error"]
