"""Shared by the weights staging tests: a model's folder as huggingface_hub writes it, on a real folder."""

from __future__ import annotations

import os
import pathlib

import pytest

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
