# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A container's env file (docker --env-file), written root-only and shown as a diff an operator can read: every
name and every value in clear but the values of secret names (named like one, or marked by the operator) and the
credentials inside URLs. Private to the collection."""

from __future__ import annotations

import os
import stat
import tempfile
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._secrets import MASK, mask_text, secret_name

MESSAGES = {
    "NOT_A_FILE": "{host}: {path} is {what}, not a regular file; the collection writes its env files itself and "
                  "replaces nothing else. Fix: remove it (it is not the collection's), then run again.",
}


def mask_env_text(text: str, secret_names: t.Iterable[str] = ()) -> str:
    """An env file's text, each NAME=value line of a secret name (or one in secret_names) as NAME=****, URL
    credentials masked on every line; comments and blank lines as they are (but URL credentials)."""
    marked = {str(name).strip() for name in secret_names}
    lines = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\n")
        name, sep, _value = body.partition("=")
        if sep and not body.lstrip().startswith("#") and (secret_name(name) or name.strip() in marked):
            lines.append(f"{name}={MASK}" + line[len(body):])
        else:
            lines.append(mask_text(line))
    return "".join(lines)


def read_existing(path: str) -> str | None:
    """The file's text, None when there is none; ValueError (the message) when something else is there."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode):
        what = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a file"
        raise ValueError(what)
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def write_atomically(path: str, content: str, mode: int = 0o600) -> None:
    """The content in a new file beside path (created with mode, never readable by others meanwhile), synced, then
    renamed over path: a reader sees the old file or the new, never a part."""
    folder = os.path.dirname(path) or "."
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".env-file-")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def plan(before: str | None, after: str, mode_now: int | None, mode: int = 0o600) -> bool:
    """Whether the file must be written: missing, different, or of another mode."""
    return before is None or before != after or mode_now != mode
