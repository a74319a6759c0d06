# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: gc_freeze
type: aggregate
short_description: Spares the controller's garbage collector the objects every task's forked workers inherit
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Ansible forks one worker per host for every task. Each worker inherits the controller's heap, and the
    collector's passes over it (in the controller between tasks, in each worker) touch every object it tracks,
    which costs CPU in the controller and copies the touched pages into each worker. C(gc.freeze()) before each task
    moves what the controller holds into the collector's permanent generation, as CPython's documentation advises
    before a fork; objects made later are collected as usual.
  - Measured on the lab (docs/benchmarks.md), a run that changes nothing spends about a tenth less CPU in the
    controller. A cycle of objects that became garbage before a task starts is not freed until the run ends (a few
    MB in a run of site.yml).
  - Prints nothing. The collection's C(ansible.cfg) enables it (C(callbacks_enabled)); a run without it behaves the
    same, only slower.
requirements:
  - Enabled with C(callbacks_enabled = inferops.vllm_cluster.gc_freeze) in C([defaults]) of ansible.cfg.
"""

import gc

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "inferops.vllm_cluster.gc_freeze"
    CALLBACK_NEEDS_ENABLED = True

    def v2_playbook_on_task_start(self, task, is_conditional):
        # before the task's workers are forked: the strategy announces a task, then queues it per host
        gc.freeze()

    def v2_playbook_on_handler_task_start(self, task):
        gc.freeze()
