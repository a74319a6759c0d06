"""What staging accepts from a hub cache others can write, on real folders: each way a container or a user could
turn a root read or write into one elsewhere, refused with its F17 line, and nothing written outside."""

from __future__ import annotations

import os

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_manifest import read_manifest
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_paths import (
    Untrusted,
    make_dirs_below,
    open_entry,
    owner_problem,
    read_commit,
    ref_name_problem,
    relative_problem,
    snapshot_files,
    write_below,
    write_sidecar,
)
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_snapshot import (
    import_snapshot,
    read_ref,
    write_ref,
)

COMMIT = "c1899de289a04d12100db370d81485cdf75e47ca"
SECRET = "root-only-secret-5e1f"


def secret_file(tmp_path):
    path = tmp_path / "etc" / "vllm_api_key"
    path.parent.mkdir(exist_ok=True)
    path.write_text(SECRET)
    return path


@pytest.mark.parametrize(("ref", "accepted"), [
    ("main", True), ("v1.2.0", True), ("refs/pr/1", True), (COMMIT, True), ("release_2", True),
    ("../../etc", False), ("/etc/passwd", False), ("main/../..", False), ("a..b", False), ("", False),
    (".hidden", False), ("a//b", False), ("main\n", False), ("x" * 300, False),
])
def test_ref_names(ref, accepted):
    problem = ref_name_problem("spark-1", ref)
    assert (problem == "") is accepted, problem
    if not accepted:
        assert problem.startswith("[F17] spark-1: model_stage_ref=")


@pytest.mark.parametrize(("name", "accepted"), [
    ("config.json", True), ("sub/model.safetensors", True), ("a.b/c-d_e.json", True),
    ("../etc/passwd", False), ("/etc/passwd", False), ("sub/../../x", False), ("./config.json", False),
    ("sub//x", False), ("", False), ("model.safetensors.part", False), ("a\\b", False), ("a\x00b", False),
])
def test_file_names_from_the_heads_manifest(name, accepted):
    assert (relative_problem("spark-2", name) == "") is accepted


@pytest.mark.parametrize("content", ["/etc/inferops-vllm-cluster", "../../..", "main", COMMIT[:39], COMMIT + "0",
                                     COMMIT.upper(), "x" * 500])
def test_a_ref_that_holds_anything_but_a_commit_is_refused_naming_file_and_content(tmp_path, content, hub_repo):
    repo = hub_repo(tmp_path / "hub")
    (repo / "refs" / "main").write_text(content)
    with pytest.raises(Untrusted) as refused:
        read_ref(str(repo), "main", "spark-1")
    message = str(refused.value)
    assert message.startswith(f"[F17] spark-1: {repo}/refs/main holds ")
    assert repr(content[:200])[1:-1][:40] in message and "Fix:" in message


def test_a_ref_that_is_a_link_is_refused_without_reading_its_target(tmp_path, hub_repo):
    repo = hub_repo(tmp_path / "hub")
    (repo / "refs" / "main").unlink()
    os.symlink(secret_file(tmp_path), repo / "refs" / "main")
    with pytest.raises(Untrusted, match=r"refs/main is a symbolic link") as refused:
        read_ref(str(repo), "main", "spark-1")
    assert SECRET not in str(refused.value)


def test_a_refs_folder_that_is_a_link_is_refused(tmp_path, hub_repo):
    repo = hub_repo(tmp_path / "hub")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "main").write_text(COMMIT)
    for entry in (repo / "refs").iterdir():
        entry.unlink()
    (repo / "refs").rmdir()
    os.symlink(elsewhere, repo / "refs")
    with pytest.raises(Untrusted, match=r"/refs is a symbolic link"):
        read_ref(str(repo), "main", "spark-1")
    with pytest.raises(Untrusted, match=r"/refs is a symbolic link"):
        write_ref(str(repo), "v2", COMMIT, "spark-1")
    assert sorted(os.listdir(elsewhere)) == ["main"]


def test_a_missing_ref_is_no_commit(tmp_path, hub_repo):
    repo = hub_repo(tmp_path / "hub")
    assert read_ref(str(repo), "v9", "spark-1") == ""
    assert read_commit(str(tmp_path), "nowhere/refs/main") == ""


def test_a_planted_tmp_link_is_replaced_not_followed(tmp_path):
    target = secret_file(tmp_path)
    root = tmp_path / "cache"
    (root / "inferops-weights").mkdir(parents=True)
    os.symlink(target, root / "inferops-weights" / "x.progress.json.tmp")
    write_sidecar(str(root / "inferops-weights" / "x.progress.json"), '{"done": 1}')
    assert target.read_text() == SECRET
    assert (root / "inferops-weights" / "x.progress.json").read_text() == '{"done": 1}'
    assert not (root / "inferops-weights" / "x.progress.json.tmp").exists()


def test_a_sidecar_folder_that_is_a_link_is_refused(tmp_path):
    root = tmp_path / "cache"
    root.mkdir()
    (tmp_path / "etc").mkdir()
    os.symlink(tmp_path / "etc", root / "inferops-weights")
    with pytest.raises(Untrusted, match=r"inferops-weights is a symbolic link"):
        write_sidecar(str(root / "inferops-weights" / "x.sha256.json"), "{}")
    assert os.listdir(tmp_path / "etc") == []


def test_writes_make_their_folders_and_refuse_a_link_on_the_way(tmp_path):
    make_dirs_below(str(tmp_path), "a/b/c")
    write_below(str(tmp_path), "a/b/c/f", "text")
    assert (tmp_path / "a" / "b" / "c" / "f").read_text() == "text"
    os.symlink(tmp_path / "a", tmp_path / "link")
    with pytest.raises(Untrusted):
        make_dirs_below(str(tmp_path), "link/d")
    assert not (tmp_path / "a" / "d").exists()


def test_a_snapshot_as_the_hub_writes_it_is_accepted(tmp_path, hub_repo):
    repo = hub_repo(tmp_path / "hub")
    assert snapshot_files(str(repo), COMMIT) == ["config.json", "sub/model.safetensors"]


@pytest.mark.parametrize(("plant", "refusal"), [
    ("link-outside", r"points to .*vllm_api_key, outside .*/blobs"),
    ("link-to-other-model", r"outside .*models--org--tiny/blobs"),
    ("linked-folder", r"sub2 is a symbolic link"),
    ("blobs-linked", r"/blobs is a symbolic link"),
    ("snapshot-linked", r"snapshots/c1899de289a04d12100db370d81485cdf75e47ca is a symbolic link"),
    ("fifo", r"is a pipe where staging reads or writes a file"),
    ("link-to-blobs-folder", r"snapshots/c1899de289a04d12100db370d81485cdf75e47ca/all is a symbolic link"),
])
def test_a_snapshot_entry_that_is_not_a_file_or_a_link_into_blobs_is_refused(tmp_path, plant, refusal, hub_repo):
    repo = hub_repo(tmp_path / "hub")
    snapshot = repo / "snapshots" / COMMIT
    secret = secret_file(tmp_path)
    if plant == "link-outside":
        os.symlink(secret, snapshot / "tokenizer.json")
    elif plant == "link-to-other-model":
        other = tmp_path / "hub" / "models--org--other" / "blobs"
        other.mkdir(parents=True)
        (other / "b").write_text("x")
        os.symlink(other / "b", snapshot / "extra.json")
    elif plant == "linked-folder":
        os.symlink(secret.parent, snapshot / "sub2")
    elif plant == "blobs-linked":
        real = tmp_path / "realblobs"
        (repo / "blobs").rename(real)
        os.symlink(real, repo / "blobs")
    elif plant == "snapshot-linked":
        real = tmp_path / "realsnapshot"
        snapshot.rename(real)
        os.symlink(real, snapshot)
    elif plant == "fifo":
        os.mkfifo(snapshot / "pipe")
    elif plant == "link-to-blobs-folder":
        os.symlink(repo / "blobs", snapshot / "all")
    with pytest.raises(Untrusted, match=refusal) as refused:
        snapshot_files(str(repo), COMMIT, "spark-1")
    assert str(refused.value).startswith("[F17] spark-1: ") and SECRET not in str(refused.value)


def test_an_operators_snapshot_with_a_link_outside_is_not_imported(tmp_path, hub_repo):
    repo = hub_repo(tmp_path / "hub")
    os.symlink(secret_file(tmp_path), repo / "snapshots" / COMMIT / "tokenizer.json")
    target = tmp_path / "node" / "snapshots" / COMMIT
    with pytest.raises(Untrusted):
        import_snapshot(str(repo), COMMIT, str(target), "spark-1")
    assert not target.exists()


def test_an_import_never_writes_through_a_planted_part_link(tmp_path, hub_repo):
    repo = hub_repo(tmp_path / "hub")
    target = tmp_path / "node" / "snapshots" / COMMIT
    target.mkdir(parents=True)
    secret = secret_file(tmp_path)
    os.symlink(secret, target / "config.json.part")
    with pytest.raises(Untrusted, match=r"config.json.part is a symbolic link"):
        import_snapshot(str(repo), COMMIT, str(target), "spark-1")
    assert secret.read_text() == SECRET


@pytest.mark.parametrize(("owners", "trusted", "refused"), [
    ({}, [], ""),
    ({"models--org--tiny": 1000}, [], "models--org--tiny"),
    ({"models--org--tiny": 1000}, ["alice"], ""),
    ({"blobs/config.json": 1001}, ["alice"], "blobs/config.json"),                 # one file deep inside the tree
    ({"snapshots": 1000, "refs/main": 1001}, ["alice", "bob"], ""),
])
def test_a_source_with_anything_owned_by_another_user_is_refused_unless_trusted(
        tmp_path, monkeypatch, hub_repo, owners, trusted, refused):
    repo = hub_repo(tmp_path / "hub")
    real_lstat = os.lstat

    class Owned:
        def __init__(self, path, info):
            relative = os.path.relpath(path, repo.parent)
            inner = os.path.relpath(path, repo)
            self.st_uid = owners.get(relative, owners.get(inner, 0))
            self.st_mode = info.st_mode

    monkeypatch.setattr(os, "lstat", lambda path, *a, **k: Owned(str(path), real_lstat(path, *a, **k)))
    names = {0: "root", 1000: "alice", 1001: "bob"}
    problem = owner_problem("spark-1", str(repo), trusted, names.__getitem__)
    if not refused:
        assert problem == ""
    else:
        assert problem.startswith("[F17] spark-1: ") and f"{refused} in model_stage_source is owned by" in problem
        uid = owners[refused]
        assert f"(uid {uid}), not root" in problem and f"model_stage_source_trusted_owners: ['{names[uid]}']" in problem


def test_a_source_that_is_a_link_is_refused(tmp_path, hub_repo):
    repo = hub_repo(tmp_path / "hub")
    (tmp_path / "link").symlink_to(repo)
    assert "is a symbolic link" in owner_problem("spark-1", str(tmp_path / "link"), [], str)


@pytest.mark.parametrize("swap", ["blob-for-a-link", "entry-for-a-link-outside", "entry-for-a-link-into-blobs-of-a-link"])
def test_what_is_swapped_in_after_the_check_is_not_read(tmp_path, hub_repo, swap):
    """snapshot_files() looked, then a writer of the cache swapped a file for a link (check then use): the manifest,
    the import and the hashes read through open_entry's descriptor refuse it instead of following it (#31)."""
    repo = hub_repo(tmp_path / "hub")
    assert snapshot_files(str(repo), COMMIT) == ["config.json", "sub/model.safetensors"]
    secret = secret_file(tmp_path)
    entry = repo / "snapshots" / COMMIT / "config.json"
    if swap == "blob-for-a-link":
        blob = repo / "blobs" / "config.json"
        blob.unlink()
        blob.symlink_to(secret)
    elif swap == "entry-for-a-link-outside":
        entry.unlink()
        entry.symlink_to(secret)
    else:
        (repo / "blobs" / "x").symlink_to(secret)
        entry.unlink()
        entry.symlink_to("../../blobs/x")
    names = ["config.json", "sub/model.safetensors"]
    with pytest.raises(Untrusted) as refused:
        read_manifest(str(repo / "snapshots" / COMMIT), names=names,
                      opener=lambda relative: open_entry(str(repo), COMMIT, relative, "spark-1"))
    assert SECRET not in str(refused.value)
    target = tmp_path / "node" / "snapshots" / COMMIT
    with pytest.raises(Untrusted):
        import_snapshot(str(repo), COMMIT, str(target), "spark-1")


def test_an_entry_is_read_through_its_link_into_blobs(tmp_path, hub_repo):
    repo = hub_repo(tmp_path / "hub")
    with os.fdopen(open_entry(str(repo), COMMIT, "sub/model.safetensors"), "rb") as handle:
        assert handle.read() == b"w" * 1000
    manifest = read_manifest(str(repo / "snapshots" / COMMIT), names=["config.json", "sub/model.safetensors"],
                             opener=lambda relative: open_entry(str(repo), COMMIT, relative))
    sizes = {name: entry["size"] for name, entry in manifest["files"].items()}
    assert sizes == {"config.json": 2, "sub/model.safetensors": 1000}
