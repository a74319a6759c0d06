# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A module's logic run by the node's Python directly, without Ansible's module runtime: the node side.

Every module Ansible runs starts by importing ansible.module_utils.basic from the AnsiballZ zip, which Python compiles
from source at each run (a zip holds no bytecode cache): ~0.25 s of a node's CPU a module, measured on the lab, where
the collection's reads themselves take a few milliseconds. The collection's read-only modules whose logic needs no
Ansible import (node_state first) keep it in module_utils as `run(params, node)`, node being what they ask of the node
(run_command, get_bin_path, with AnsibleModule's meaning); their action plugins (plugin_utils/_direct_action.py) send
that logic with the arguments, already validated on the controller, to the node's Python in one pipelined command.
The module itself stays what runs where that path does not apply (no pipelining, interpreter discovery not done yet).

Nothing here may import from ansible: it runs where no Ansible is installed. Private to the collection."""

from __future__ import annotations

import importlib
import json
import locale
import os
import shlex
import subprocess
import sys
import typing as t

# Where AnsibleModule.get_bin_path looks beyond PATH (ansible.module_utils.common.process).
SBIN_DIRS = ("/sbin", "/usr/sbin", "/usr/local/sbin")


def _expanded(word: str) -> str:
    """`~` and $VARS of word, the node's, as AnsibleModule expands a `path` option and each argument of a command."""
    return os.path.expanduser(os.path.expandvars(word))


class ModuleError(Exception):
    """A failure the module reports as AnsibleModule.fail_json would: a message and the result's other keys."""

    def __init__(self, msg: str, **extra: t.Any) -> None:
        super().__init__(msg)
        self.extra = extra


class Node:
    """What a module's logic asks of the node, with AnsibleModule's meaning, where no AnsibleModule runs."""

    def __init__(self) -> None:
        # AnsibleModule's locale check: a locale the node lacks (ssh's SendEnv forwards the controller's LANG) is
        # replaced for every command the logic runs
        try:
            locale.setlocale(locale.LC_ALL, "")
        except locale.Error:
            for name in ("LANG", "LC_ALL", "LC_MESSAGES"):
                os.environ[name] = "C.UTF-8"

    def run_command(self, args: list[str | None] | str, check_rc: bool = False, data: str | None = None,
                    cwd: str | None = None, environ_update: t.Mapping[str, str] | None = None) -> tuple[int, str, str]:
        """(rc, stdout, stderr) of args run without a shell, as AnsibleModule.run_command runs them: a string split as a
        shell would, None dropped, `~` and $VARS of each argument expanded, output decoded with surrogates for what
        is not UTF-8; a command that cannot start fails the module, and check_rc a non-zero exit; data goes to the
        command's stdin with a newline, which is otherwise empty (the module's came from the controller)."""
        words = shlex.split(args) if isinstance(args, str) else [str(arg) for arg in args if arg is not None]
        argv = [_expanded(word) for word in words]
        env = dict(os.environ, **(environ_update or {}))
        try:
            done = subprocess.run(argv, input=None if data is None else (data + "\n").encode(),
                                  stdin=subprocess.DEVNULL if data is None else None, cwd=cwd, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
        except OSError as error:
            raise ModuleError(str(error), rc=error.errno, cmd=" ".join(argv)) from None
        out = done.stdout.decode("utf-8", "surrogateescape")
        err = done.stderr.decode("utf-8", "surrogateescape")
        if check_rc and done.returncode != 0:
            raise ModuleError(err.strip() or out.strip() or f"{argv[0]} exited {done.returncode}", rc=done.returncode,
                              cmd=" ".join(argv), stdout=out, stderr=err)
        return done.returncode, out, err

    def get_bin_path(self, name: str, required: bool = False) -> str | None:
        """The executable's path from PATH and the sbin directories, as AnsibleModule finds it; None where there is
        none (a failure where required)."""
        paths = [path for path in os.environ.get("PATH", "").split(os.pathsep) if path]
        paths += [path for path in SBIN_DIRS if path not in paths]
        for folder in paths:
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
        if required:
            raise ModuleError(f"Failed to find required executable \"{name}\" in paths: {os.pathsep.join(paths)}")
        return None


def node_params(spec: t.Mapping[str, t.Mapping[str, t.Any]], params: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """params, checked on the controller with `path` options taken as strings, with those expanded here as
    AnsibleModule expands them where the module runs: `~` and $VARS are the node's."""
    expanded = dict(params)
    for name, option in spec.items():
        value = expanded.get(name)
        if option.get("type") == "path" and isinstance(value, str):
            expanded[name] = _expanded(value)
        elif option.get("elements") == "path" and isinstance(value, list):
            expanded[name] = [_expanded(item) if isinstance(item, str) else item for item in value]
    return expanded


def outcome(module: str, entry: str, params: t.Mapping[str, t.Any], node: t.Any) -> dict[str, t.Any]:
    """The result of module's entry(params, node) (its `path` options expanded on the node): what it returns, or
    failed with its ModuleError's message."""
    logic = importlib.import_module(module)
    try:
        return getattr(logic, entry)(node_params(getattr(logic, "ARGUMENT_SPEC", {}), params), node)
    except ModuleError as error:
        return dict(error.extra, failed=True, msg=str(error))


def serve(module: str, entry: str, params: t.Mapping[str, t.Any]) -> None:
    """The program's last step on the node: the result as one JSON document on stdout. An unexpected exception
    leaves a traceback on stderr and a non-zero exit, which the action reports."""
    sys.stdout.write(json.dumps(outcome(module, entry, params, Node())))
    sys.stdout.flush()
