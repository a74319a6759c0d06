"""A snapshot's manifest, read from a real folder laid out as the hub cache lays it out (blobs + symlinks)."""

from __future__ import annotations

import hashlib
import os

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_manifest import read_manifest, remember


def hub_snapshot(tmp_path):
    repo = tmp_path / "hub" / "models--org--tiny"
    (repo / "blobs").mkdir(parents=True)
    snapshot = repo / "snapshots" / "rev1"
    snapshot.mkdir(parents=True)
    for name, content in {"config.json": b"{}", "model.safetensors": b"w" * 1000}.items():
        blob = repo / "blobs" / hashlib.sha256(content).hexdigest()
        blob.write_bytes(content)
        os.symlink(os.path.relpath(blob, snapshot), snapshot / name)
    return snapshot


def test_every_file_with_its_size_and_hash_symlinks_followed(tmp_path):
    snapshot = hub_snapshot(tmp_path)
    result = read_manifest(str(snapshot))
    assert result["files"] == {
        "config.json": {"size": 2, "sha256": hashlib.sha256(b"{}").hexdigest()},
        "model.safetensors": {"size": 1000, "sha256": hashlib.sha256(b"w" * 1000).hexdigest()},
    }
    assert result["hashed"] == 2


def test_a_second_read_hashes_nothing_unless_a_file_changed(tmp_path):
    snapshot = hub_snapshot(tmp_path)
    cache = str(tmp_path / "manifest-cache.json")
    calls = []

    def counting(path):
        calls.append(os.path.basename(path))
        return "h-" + os.path.basename(path)

    assert read_manifest(str(snapshot), cache, counting)["hashed"] == 2
    assert read_manifest(str(snapshot), cache, counting)["hashed"] == 0
    # a corrupted file keeps its name; its size changed, so it is hashed again
    target = os.path.realpath(snapshot / "model.safetensors")
    with open(target, "ab") as handle:
        handle.write(b"x")
    again = read_manifest(str(snapshot), cache, counting)
    assert again["hashed"] == 1 and calls[-1] == "model.safetensors"
    assert again["files"]["model.safetensors"]["size"] == 1001


def test_partial_downloads_are_not_part_of_the_snapshot(tmp_path):
    snapshot = hub_snapshot(tmp_path)
    (snapshot / "model.safetensors.part").write_bytes(b"half")
    assert "model.safetensors.part" not in read_manifest(str(snapshot))["files"]


def test_a_missing_folder_is_an_empty_manifest(tmp_path):
    assert read_manifest(str(tmp_path / "nowhere")) == {"files": {}, "hashed": 0}


def test_files_just_copied_and_verified_are_not_hashed_again(tmp_path):
    snapshot = hub_snapshot(tmp_path)
    cache = tmp_path / "hashes" / "tiny.json"
    read_manifest(str(snapshot), str(cache))
    (snapshot / "new.bin").write_bytes(b"n" * 10)
    remember(str(snapshot), str(cache), {"new.bin": "recorded-by-the-copy"})
    result = read_manifest(str(snapshot), str(cache))
    assert result["hashed"] == 0 and result["files"]["new.bin"]["sha256"] == "recorded-by-the-copy"
    (snapshot / "new.bin").write_bytes(b"m" * 11)  # changed afterwards: size and mtime differ, hashed again
    result = read_manifest(str(snapshot), str(cache))
    assert result["hashed"] == 1 and result["files"]["new.bin"]["sha256"] == hashlib.sha256(b"m" * 11).hexdigest()


def test_check_mode_reuses_the_hashes_but_writes_none(tmp_path):
    snapshot = hub_snapshot(tmp_path)
    cache = tmp_path / "hashes.json"
    assert read_manifest(str(snapshot), str(cache), keep=False)["hashed"] == 2
    assert not cache.exists()
    read_manifest(str(snapshot), str(cache))
    (snapshot / "extra.bin").write_bytes(b"e")
    before = cache.read_text()
    assert read_manifest(str(snapshot), str(cache), keep=False)["hashed"] == 1
    assert cache.read_text() == before
