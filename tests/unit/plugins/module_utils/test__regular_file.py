"""A file read as root is opened without following a link, and only when it is a regular file."""

from __future__ import annotations

import os

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._regular_file import regular_file


def make_file(path):
    path.write_bytes(b"secret")


def make_link(path):
    target = path.parent / "elsewhere"
    target.write_bytes(b"not this")
    path.symlink_to(target)


@pytest.mark.parametrize("case, make, content", [
    ("a regular file", make_file, b"secret"),
    ("missing", lambda path: None, None),
    ("a link to a regular file", make_link, None),
    ("a directory", os.mkdir, None),
    ("a fifo (opened without blocking, not read)", os.mkfifo, None),
])
def test_regular_file(tmp_path, case, make, content):
    path = tmp_path / "key"
    make(path)
    with regular_file(str(path)) as handle:
        assert (handle.read() if handle is not None else None) == content, case
