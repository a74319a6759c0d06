# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Opening a file the collection reads as root on a node (a secret, a file it hashes) without following a link:
a link planted at the path, or swapped in after an lstat, is refused rather than read through, and so is anything but
a regular file (a FIFO would block the read: O_NONBLOCK). Private to the collection."""

from __future__ import annotations

import contextlib
import os
import stat
import typing as t


@contextlib.contextmanager
def regular_file(path: str) -> t.Iterator[t.BinaryIO | None]:
    """The open file, or None where the path is missing, unreadable, a link or not a regular file."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        yield None
        return
    # judged on the descriptor, before a file object is made of it (os.fdopen refuses a directory's)
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        yield None
        return
    with os.fdopen(descriptor, "rb") as handle:
        yield handle
