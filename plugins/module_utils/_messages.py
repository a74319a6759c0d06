# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A sentence of one of the collection's message tables, for a task whose message needs no decision of its own (a
failure that reports what a task found, a warning, a note): the roles name it, `TABLE.NAME` (`runtime.NO_NVIDIA_CTK`
is MESSAGES["NO_NVIDIA_CTK"] of module_utils/_runtime.py), and give its fields; the words stay in Python beside the
decisions of the same layer, where the guide's tests read them. tests/unit/test_messages.py checks every key a role
or playbook names exists and gets exactly the fields its sentence asks. Private to the collection."""

from __future__ import annotations

import importlib
import re
import string
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING, with_guide

PACKAGE = __name__.rpartition(".")[0]  # the collection's module_utils, where the tables live
KEY = re.compile(r"([a-z][a-z0-9_]*)\.([A-Za-z][A-Za-z0-9_]*)")


def sentence(key: str) -> str:
    """The table's sentence for key (`TABLE.NAME`), its fields unfilled; ValueError for a key that names none."""
    found = KEY.fullmatch(str(key))
    if not found:
        raise ValueError(f"message key {key!r} is not TABLE.NAME (e.g. runtime.NO_NVIDIA_CTK)")
    module = f"{PACKAGE}._{found.group(1)}"
    try:
        table = importlib.import_module(module).MESSAGES
    except ModuleNotFoundError as error:
        if error.name != module:
            raise
        raise ValueError(f"message key {key!r}: there is no module_utils/_{found.group(1)}.py") from None
    except AttributeError:
        raise ValueError(f"message key {key!r}: module_utils/_{found.group(1)}.py has no MESSAGES table") from None
    if found.group(2) not in table:
        raise ValueError(f"message key {key!r}: no {found.group(2)} in module_utils/_{found.group(1)}.py's MESSAGES")
    return table[found.group(2)]


def _asked(text: str) -> set[str]:
    """The fields a sentence asks its caller for (`{host}`, `{model!r}`, `{limit:.0%}` alike), less `{doc}`."""
    parsed = string.Formatter().parse(text)
    return {name.split(".")[0].split("[")[0] for _text, name, _spec, _conversion in parsed if name} - {"doc"}


def fields(key: str) -> set[str]:
    """The fields key's sentence asks its caller for; `{doc}`, the guide's address, is filled here."""
    return _asked(sentence(key))


def message(key: str, **values: t.Any) -> str:
    """key's sentence with its fields filled, citing the guide's section of each failure mode the sentence itself
    names ([F<n>]; never one a value brings, such as a log line); ValueError naming the fields missing or not asked
    for, or a value its format refuses (a role's mistake, shown before it misleads anyone)."""
    text = sentence(key)
    wanted = _asked(text)
    if set(values) != wanted:
        raise ValueError(f"message {key} asks for {sorted(wanted)}, given {sorted(values)}")
    given = {name: "" if value is None else value for name, value in values.items()}
    try:
        filled = text.format(doc=TROUBLESHOOTING, **given)
    except (KeyError, IndexError, TypeError, ValueError) as error:
        raise ValueError(f"message {key}: {error!r} filling it with {sorted(values)}") from None
    # the citations the sentence itself calls for, never one a value brings (a log line naming [F7])
    unfilled = text.replace("{doc}", TROUBLESHOOTING)
    return filled + with_guide([unfilled])[len(unfilled):]
