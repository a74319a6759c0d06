# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: serving_play_follows
short_description: Whether site.yml's vLLM play runs later in this run
version_added: 0.1.0
author: inferops engineering (@inferops)
description:
  - The validate play checks a serving vLLM (F20) only when nothing later in the same run will (re)start and
    health-check it; otherwise a vLLM that died would stop the very run that brings it back.
  - The vLLM play runs when the run's tags select it (no tags, C(vllm), C(ray) or C(ray_head)), C(--skip-tags)
    does not skip it, and the Ray head is among the play's hosts (C(--limit) may leave it out).
options:
  _input:
    description: C(ansible_run_tags).
    type: list
    elements: str
    required: true
  skip_tags:
    description: C(ansible_skip_tags).
    type: list
    elements: str
    required: true
  head_in_play:
    description: Whether the Ray head is among the play's hosts (C(ansible_play_hosts_all)).
    type: bool
    required: true
"""

EXAMPLES = r"""
- name: Check vLLM here unless site.yml's vLLM play follows
  ansible.builtin.debug:
    msg: checking vLLM
  when: not (ansible_run_tags | inferops.vllm_cluster.serving_play_follows(ansible_skip_tags, 'spark-1' in ansible_play_hosts_all))
"""

RETURN = r"""
_value:
  description: Whether site.yml's vLLM play runs after this one.
  type: bool
"""

# The tags site.yml gives its vLLM play (playbooks/site.yml).
SERVING_PLAY_TAGS = frozenset({"vllm", "ray", "ray_head"})


def serving_play_follows(run_tags, skip_tags, head_in_play):
    run_tags, skip_tags = set(run_tags or ["all"]), set(skip_tags or [])
    selected = "all" in run_tags or bool(run_tags & SERVING_PLAY_TAGS)
    # a task is skipped when any of its tags is skipped
    skipped = "all" in skip_tags or bool(skip_tags & SERVING_PLAY_TAGS)
    return bool(head_in_play) and selected and not skipped


class FilterModule:
    def filters(self):
        return {"serving_play_follows": serving_play_follows}
