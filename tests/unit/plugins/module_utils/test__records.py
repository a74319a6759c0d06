"""A record on the controller counts as already written only when it is exactly what the writer would leave there."""

from __future__ import annotations

import os

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._records import already_written

CONTENT = '{\n    "cluster": "lab"\n}\n'


def as_written(path):
    path.write_text(CONTENT)
    path.chmod(0o600)


def other_content(path):
    as_written(path)
    path.write_text(CONTENT.replace("lab", "lbb"))


def longer(path):
    as_written(path)
    path.write_text(CONTENT + " ")


def group_readable(path):
    as_written(path)
    path.chmod(0o640)


def link_to_same(path):
    target = path.parent / "elsewhere"
    target.write_text(CONTENT)
    target.chmod(0o600)
    path.symlink_to(target)


def open_directory(path):
    as_written(path)
    path.parent.chmod(0o755)


@pytest.mark.parametrize("case, make, written", [
    ("exactly what would be written", as_written, True),
    ("missing", lambda path: None, False),
    ("other content", other_content, False),
    ("a byte more", longer, False),
    ("group-readable", group_readable, False),
    ("a link to the same content", link_to_same, False),
    ("a directory at the path", os.mkdir, False),
    ("its directory open to others", open_directory, False),
])
def test_already_written(tmp_path, case, make, written):
    records = tmp_path / "records"
    records.mkdir(mode=0o700)
    records.chmod(0o700)
    path = records / "deployed.json"
    make(path)
    assert already_written(str(path), CONTENT) is written, case


def test_a_missing_directory_is_not_written(tmp_path):
    assert already_written(str(tmp_path / "nowhere" / "deployed.json"), CONTENT) is False
