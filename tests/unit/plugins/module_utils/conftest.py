"""Shared by the weights staging tests: a model's folder as huggingface_hub writes it, on a real folder, and the
head's staging server over it on loopback."""

from __future__ import annotations

import hashlib
import os
import pathlib
import shutil
import socket
import threading
import typing as t

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_server import Staging, serve

COMMIT = "c1899de289a04d12100db370d81485cdf75e47ca"


@pytest.fixture()
def hub_repo(tmp_path):
    """make(hub) -> hub/models--org--tiny after a download: blobs, the snapshot's links into them, refs/main."""
    def make(hub: pathlib.Path) -> pathlib.Path:
        repo = hub / "models--org--tiny"
        (repo / "blobs").mkdir(parents=True)
        (repo / "refs").mkdir()
        (repo / "refs" / "main").write_text(COMMIT)
        snapshot = repo / "snapshots" / COMMIT
        (snapshot / "sub").mkdir(parents=True)
        for name, content in {"config.json": b"{}", "sub/model.safetensors": b"w" * 1000}.items():
            blob = repo / "blobs" / name.replace("/", "_")
            blob.write_bytes(content)
            os.symlink(os.path.relpath(blob, (snapshot / name).parent), snapshot / name)
        return repo
    return make


class Head:
    """The head's staging server (_weights_server.serve) on loopback, in a thread, over a hub_repo-made model."""

    def __init__(self, repo: pathlib.Path, files: dict, secret: str, workers: int = 1, idle: float = 30,
                 startup: float = 60, timeout: float = 10) -> None:
        self.staging = Staging(str(repo), COMMIT, files, secret, workers, "spark-1")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.result: dict = {}
        listening = threading.Event()

        def run() -> None:
            self.result = serve("127.0.0.1", self.port, self.staging, idle, startup, timeout,
                                on_listening=listening.set, poll=0.05)

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert listening.wait(10)

    def wait(self, seconds: float) -> dict:
        """What serve() returned, once it has stopped by itself within `seconds`."""
        self.thread.join(seconds)
        assert not self.thread.is_alive(), f"the server still serves after {seconds} s"
        return self.result

    def stop(self) -> None:
        with self.staging.lock:
            self.staging.workers = 1
            self.staging.done.add("teardown")
        self.thread.join(10)


@pytest.fixture()
def staging_head(tmp_path, hub_repo):
    """start(contents=None, **Head options) -> a Head serving a model whose files are `contents` (relative path ->
    bytes; the hub_repo model when None), with the manifest and the secret; every head is stopped afterwards."""
    heads = []

    def start(contents: t.Optional[dict] = None, secret: str = "s3cret", **options: t.Any) -> tuple[Head, dict, dict]:
        repo = hub_repo(tmp_path / f"head{len(heads)}")
        if contents is not None:
            shutil.rmtree(repo / "snapshots" / COMMIT)
            shutil.rmtree(repo / "blobs")
            (repo / "blobs").mkdir()
            for name, content in contents.items():
                blob = repo / "blobs" / hashlib.sha256(content).hexdigest()
                blob.write_bytes(content)
                entry = repo / "snapshots" / COMMIT / name
                entry.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(os.path.relpath(blob, entry.parent), entry)
        snapshot = repo / "snapshots" / COMMIT
        contents = {str(path.relative_to(snapshot)): path.read_bytes()
                    for path in sorted(snapshot.rglob("*")) if path.is_file()}
        manifest = {name: {"size": len(c), "sha256": hashlib.sha256(c).hexdigest()} for name, c in contents.items()}
        head = Head(repo, manifest, secret, **options)
        heads.append(head)
        return head, manifest, contents

    yield start
    for head in heads:
        head.stop()
