# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A container's env file (docker --env-file), written root-only and shown as a diff an operator can read: every
name and every value in clear but the values of secret names (named like one, or marked by the operator) and the
credentials inside URLs. Private to the collection."""

from __future__ import annotations

import difflib
import os
import re
import stat
import tempfile
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._secrets import MASK, mask_text, secret_name

MESSAGES = {
    "NOT_A_FILE": "{host}: {path} is {what}, not a regular file; the collection writes its env files itself and "
                  "replaces nothing else. Fix: remove it (it is not the collection's), then run again.",
    "NO_FOLDER": "{host}: cannot write {path}: {error}. Fix: run the docker_runtime role first (it creates the "
                 "collection's folders), or correct vllm_cluster_config_dir.",
}


def _lines(text: str) -> list[str]:
    """Lines as docker's env-file reader sees them: split on \\n alone (str.splitlines would also split on \\v, \\f,
    \\x1c-\\x1e, \\x85, \\u2028 and \\u2029, which a value may hold, and show the rest of a secret)."""
    return text.split("\n")


def _keys(names: t.Iterable[str]) -> set[str]:
    """Names as compared here: stripped, case aside (the operator's list, the file's names)."""
    return {str(name).strip().upper() for name in names}


def _masked(name: str, marked: set[str], clear: set[str] | None) -> bool:
    key = name.strip().upper()
    if secret_name(name) or key in marked:
        return True
    return clear is not None and key not in clear


def shown_names(text: str, secret_names: t.Iterable[str] = ()) -> set[str]:
    """The names whose values mask_env_text shows in clear in this text."""
    marked = _keys(secret_names)
    return {name for name in _values(text) if not _masked(name, marked, None)}


def assignments(text: str) -> list[tuple[str, str]]:
    """(name, value) of every line that sets a name, as docker's env-file reader sees them (no comment, no bare
    name; split as _lines). The one reading of an env file's entries: the masked diff and the link gate's digest."""
    return [(name, value) for name, sep, value in (line.partition("=") for line in _lines(text))
            if sep and not name.lstrip().startswith("#")]


def _values(text: str) -> dict[str, str]:
    return {name.strip().upper(): value for name, value in assignments(text)}


def _lines_kept(text: str) -> list[str]:
    """The lines with their \\n, as difflib wants them (split on \\n alone, as _lines)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def mask_env_text(text: str, secret_names: t.Iterable[str] = (), clear: t.Iterable[str] | None = None,
                  changed: t.Iterable[str] = ()) -> str:
    """An env file's text, each NAME=value line of a secret name (named like one, or in secret_names, case aside) as
    NAME=****, URL credentials masked on every line; comments and blank lines as they are (but URL credentials).
    With `clear`, only the values of those names are shown at all: the old side of a diff, where a name the
    operator has since removed, or marked secret only now, must not show the value it had. A masked value of a
    name in `changed` reads `**** (changed)`, so that a changed secret still shows as a line of the diff."""
    marked, differ = _keys(secret_names), _keys(changed)
    allowed = None if clear is None else _keys(clear)
    lines = []
    for line in _lines(text):
        name, sep, _value = line.partition("=")
        if sep and not line.lstrip().startswith("#") and _masked(name, marked, allowed):
            lines.append(f"{name}={MASK}" + (" (changed)" if name.strip().upper() in differ else ""))
        else:
            lines.append(mask_text(line))
    return "\n".join(lines)


def masked_diff(path: str, before: str | None, after: str, secret_names: t.Iterable[str] = ()) -> str:
    """A unified diff of the file, both sides masked; the old side shows in clear only what the new one does."""
    names = list(secret_names)
    old_values, new_values = _values(before or ""), _values(after)
    changed = {name for name in new_values if name in old_values and old_values[name] != new_values[name]}
    old = mask_env_text(before or "", names, clear=shown_names(after, names))
    new = mask_env_text(after, names, changed=changed)
    return "".join(difflib.unified_diff(_lines_kept(old), _lines_kept(new),
                                        fromfile=f"{path} (before)" if before is not None else "/dev/null",
                                        tofile=f"{path} (after)"))


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


def plan(before: str | None, after: str, mode_now: int | None, mode: int = 0o600, owner_now: int | None = None,
         owner: int | None = None) -> bool:
    """Whether the file must be written: missing, different, of another mode or another owner."""
    return before is None or before != after or mode_now != mode or (owner is not None and owner_now != owner)
