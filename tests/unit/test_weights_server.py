"""The head's staging server, run as the role runs it (python3 file, address, port, folder, idle and startup
seconds, the manifest): a node's copy through it, resumed, the server gone once idle, and nothing served but the
manifest's regular files (#31)."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_fetch import fetch_files

SERVER = pathlib.Path(__file__).resolve().parents[2] / "roles" / "model_stage" / "files" / "weights_server.py"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_node_copies_through_it_and_it_exits_when_idle(tmp_path):
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    content = b"weights" * 50000
    (snapshot / "model.safetensors").write_bytes(content)
    port = free_port()
    manifest = {"model.safetensors": {"size": len(content), "sha256": hashlib.sha256(content).hexdigest()}}
    server = subprocess.Popen([sys.executable, str(SERVER), "127.0.0.1", str(port), str(snapshot), "2", "120",
                               json.dumps(manifest)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout.readline().startswith(f"serving {snapshot} on 127.0.0.1:{port}")
        node = tmp_path / "node"
        node.mkdir()
        (node / "model.safetensors.part").write_bytes(content[:1234])
        result = fetch_files(f"http://127.0.0.1:{port}", manifest, str(node))
        assert result["bytes"] == len(content) - 1234
        assert (node / "model.safetensors").read_bytes() == content
        started = time.monotonic()
        assert server.wait(timeout=15) == 0
        assert time.monotonic() - started < 15
    finally:
        server.kill()


def test_it_refuses_an_address_it_cannot_bind(tmp_path):
    result = subprocess.run([sys.executable, str(SERVER), "192.0.2.1", str(free_port()), str(tmp_path), "1", "1", "{}"],
                            capture_output=True, text=True, timeout=30, check=False)
    assert result.returncode == 1 and "could not listen on 192.0.2.1" in result.stderr


def test_a_slow_transfer_keeps_it_up_past_the_idle_time(tmp_path):
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    content = bytes(range(256)) * (64 * 1024)  # 16 MiB: more than the socket buffers hold
    (snapshot / "big.safetensors").write_bytes(content)
    port = free_port()
    server = subprocess.Popen([sys.executable, str(SERVER), "127.0.0.1", str(port), str(snapshot), "1", "30",
                               json.dumps({"big.safetensors": {"size": len(content)}})], stdout=subprocess.PIPE, text=True)
    try:
        server.stdout.readline()
        received = bytearray()
        started = time.monotonic()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/big.safetensors", timeout=10) as response:
            for block in iter(lambda: response.read(1024 * 1024), b""):
                received += block
                time.sleep(0.25)
        assert time.monotonic() - started > 3  # three idle periods passed while it streamed
        assert bytes(received) == content
        assert server.wait(timeout=10) == 0
    finally:
        server.kill()


def test_it_exits_when_no_node_ever_asks(tmp_path):
    server = subprocess.Popen([sys.executable, str(SERVER), "127.0.0.1", str(free_port()), str(tmp_path), "30", "1", "{}"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.wait(timeout=10) == 0
    finally:
        server.kill()


def hub_snapshot(tmp_path):
    """A model folder as huggingface_hub writes it: snapshots/<commit>/ entries linking into ../../blobs/."""
    repo = tmp_path / "models--org--m"
    (repo / "blobs").mkdir(parents=True)
    snapshot = repo / "snapshots" / ("c" * 40)
    (snapshot / "sub").mkdir(parents=True)
    for name, content in {"config.json": b"{}", "sub/w.safetensors": b"w" * 100}.items():
        blob = repo / "blobs" / hashlib.sha256(content).hexdigest()
        blob.write_bytes(content)
        os.symlink(os.path.relpath(blob, (snapshot / name).parent), snapshot / name)
    return snapshot


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


def test_it_serves_the_manifests_files_and_nothing_else(tmp_path):
    snapshot = hub_snapshot(tmp_path)
    secret = tmp_path / "vllm_api_key"
    secret.write_text("root-only-secret")
    os.symlink(secret, snapshot / "leak.json")                    # a link out of the model (planted during a copy)
    os.symlink(secret, snapshot.parent.parent / "blobs" / "evil")  # a blob that is itself a link
    os.symlink("../../blobs/evil", snapshot / "evil.json")
    (snapshot / "unlisted.json").write_text("{}")                  # a regular file the manifest does not name
    os.mkfifo(snapshot / "pipe.json")
    manifest = {"config.json": {"size": 2}, "sub/w.safetensors": {"size": 100}, "leak.json": {"size": 16},
                "evil.json": {"size": 16}, "pipe.json": {"size": 0}, "short.json": {"size": 5}}
    (snapshot / "short.json").write_text("{}")                     # not the manifest's size: changed since
    port = free_port()
    server = subprocess.Popen([sys.executable, str(SERVER), "127.0.0.1", str(port), str(snapshot), "5", "30",
                               json.dumps(manifest)], stdout=subprocess.PIPE, text=True)
    try:
        server.stdout.readline()
        base = f"http://127.0.0.1:{port}"
        assert get(f"{base}/config.json") == (200, b"{}")
        assert get(f"{base}/sub/w.safetensors") == (200, b"w" * 100)
        for name in ("leak.json", "evil.json", "unlisted.json", "pipe.json", "short.json", "../vllm_api_key",
                     "%2e%2e/%2e%2e/blobs/evil", "sub/../config.json", ""):
            status, body = get(f"{base}/{name}")
            assert status == 404 and b"root-only-secret" not in body, name
    finally:
        server.kill()
        server.wait()
