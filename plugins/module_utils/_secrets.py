# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Masking secrets in what the collection shows of a container (reports, failure messages).
Private to the collection."""

from __future__ import annotations

import re

MASK = "****"
# A variable or flag named like a secret: VLLM_API_KEY, HF_TOKEN, --api-key, --hf-token, DB_PASSWORD ...
# (also *_PASS, *_PWD, *_AUTH, a numbered one: GITHUB_TOKEN_2). Programs run inside a container get the pattern
# itself (_rank_env.READ_PROCESSES), so every place masks the same names.
SECRET_NAME_PATTERN = r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD|AUTH|CREDENTIALS?)(_?[0-9]+)?$"
_SECRET_NAME = re.compile(SECRET_NAME_PATTERN, re.IGNORECASE)
# user:password@ in a URL (HTTPS_PROXY=http://user:pass@proxy:3128)
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:@/\s]*):[^@/\s]*@")


def mask_text(text: str) -> str:
    """Credentials inside URLs, anywhere in a string."""
    return _URL_CREDENTIALS.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", str(text))


def secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name.strip().lstrip("-").replace("-", "_")))


def mask_env(entries: list) -> list[str]:
    """NAME=value entries (a container's Config.Env) with secret values and URL credentials masked."""
    masked = []
    for entry in entries or []:
        name, sep, value = str(entry).partition("=")
        masked.append(f"{name}={MASK}" if sep and secret_name(name) else mask_text(entry))
    return masked


def mask_argv(argv: list) -> list[str]:
    """A command line with the values of secret-named flags (--api-key X, --hf-token=X) masked."""
    masked: list[str] = []
    hide_next = False
    for arg in argv or []:
        arg = str(arg)
        if hide_next:
            masked.append(MASK)
            hide_next = False
        elif arg.startswith("-") and "=" in arg and secret_name(arg.split("=", 1)[0]):
            masked.append(arg.split("=", 1)[0] + "=" + MASK)
        elif arg.startswith("-") and secret_name(arg):
            masked.append(arg)
            hide_next = True
        else:
            masked.append(mask_text(arg))
    return masked
