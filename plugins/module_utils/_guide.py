# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where the troubleshooting guide lives: every message with an F-number links its section (URL#f<n>). The one
place it is written; vllm_cluster_troubleshooting_url says the same for the playbooks (a unit test keeps them
equal). Private to the collection."""

from __future__ import annotations

import re
import typing as t

TROUBLESHOOTING = "https://github.com/inferops/vllm_cluster/blob/main/docs/troubleshooting.md"


def with_guide(problems: t.Iterable[str]) -> str:
    """The problems as one message, citing at its end the guide's section of each failure mode they name ([F<n>]),
    once each, in the order they first appear; a section a problem already cites is not cited again."""
    problems = [str(p) for p in problems or [] if str(p)]
    text = " ".join(problems)
    sections = []
    for code in re.findall(r"\[F(\d+)\]", text):
        section = f"{TROUBLESHOOTING}#f{code}"
        # #f1 is not cited by a #f19 in the text
        if section not in sections and not re.search(re.escape(section) + r"(?!\d)", text):
            sections.append(section)
    return " ".join([text] + [f"See {section}" for section in sections]) if sections else text
