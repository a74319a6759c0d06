"""A model's folder in a hub cache, on a real folder: refs, the operator's copy found where it is, brought in."""

from __future__ import annotations

import os

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_snapshot import (
    find_repo,
    import_snapshot,
    read_ref,
    repo_dir,
    write_ref,
)

COMMIT = "c1899de289a04d12100db370d81485cdf75e47ca"


@pytest.fixture()
def operator_home(tmp_path, hub_repo):
    """An operator's ~/.cache/huggingface after a download."""
    return hub_repo(tmp_path / "home" / "hub")


@pytest.mark.parametrize("given", ["home", "home/hub", "home/hub/models--org--tiny", "home/hub/models--org--tiny/"])
def test_the_model_folder_is_found_from_an_hf_home_its_hub_or_itself(tmp_path, given, operator_home):
    repo = operator_home
    assert find_repo(str(tmp_path / given), "org/tiny") == str(repo)


@pytest.mark.parametrize("given", ["home/hub/models--org--other", "nowhere", "home/hub/models--org--tiny/snapshots"])
def test_no_model_folder_elsewhere(tmp_path, given, operator_home):
    assert operator_home
    assert find_repo(str(tmp_path / given), "org/tiny") == ""


def test_refs_read_and_written(tmp_path, operator_home):
    repo = operator_home
    assert read_ref(str(repo), "main") == COMMIT
    assert read_ref(str(repo), COMMIT) == COMMIT  # a commit names itself when its snapshot is there
    assert read_ref(str(repo), "f" * 40) == ""
    assert read_ref(str(repo), "v2") == ""
    assert write_ref(str(repo), "main", COMMIT) is False
    assert write_ref(str(repo), "v2", COMMIT) is True and read_ref(str(repo), "v2") == COMMIT
    assert write_ref(str(repo), COMMIT, COMMIT) is False  # a commit is no ref to write


def sizes(root):
    return {os.path.relpath(os.path.join(folder, name), root): os.path.getsize(os.path.join(folder, name))
            for folder, _dirs, names in os.walk(root) for name in names}


def test_import_copies_regular_files_and_only_what_differs(tmp_path, operator_home):
    repo = operator_home
    target = repo_dir(str(tmp_path / "node"), "org/tiny") + "/snapshots/" + COMMIT
    assert import_snapshot(str(repo), COMMIT, target) == ["config.json", "sub/model.safetensors"]
    assert not os.path.islink(os.path.join(target, "sub/model.safetensors"))
    assert sizes(target) == {"config.json": 2, "sub/model.safetensors": 1000}
    assert import_snapshot(str(repo), COMMIT, target) == []
    with open(os.path.join(target, "sub/model.safetensors"), "wb") as handle:
        handle.write(b"truncated")
    assert import_snapshot(str(repo), COMMIT, target) == ["sub/model.safetensors"]
