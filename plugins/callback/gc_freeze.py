# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: gc_freeze
type: aggregate
short_description: Keeps Python's collector off the heap every task's forked workers inherit from the controller
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Ansible forks one worker per host for every task, and each inherits the controller's heap. The collector's full
    passes over that heap (in the controller between tasks, in a worker while it runs) walk every object it tracks,
    which costs CPU and, in a worker, copies pages it would otherwise share. Right before each worker is forked, this
    callback moves what the controller holds into the collector's permanent generation (C(gc.freeze())), the step
    CPython's documentation advises before a fork; objects made later are collected as usual. Workers still copy
    the pages whose reference counts they change.
  - What freezing keeps from the collector (the garbage of the tasks run since) is handed back at a play's start,
    collected once and frozen again, only where it grew past twice what the last collection left (and past 250,000
    objects). A full collection walks the whole heap, 50-100 ms on the lab at each of site.yml's 14 plays, where the
    garbage kept is about 25,000 objects (5 MB); so a run of site.yml collects none, and a longer playbook's memory
    stays bounded.
  - Measured on the lab (docs/benchmarks.md), a run of site.yml that changes nothing spends about a tenth less CPU.
  - Prints nothing. Runs from the collection's checkout have it through its C(ansible.cfg); a run without it behaves
    the same, only slower. C(ANSIBLE_CALLBACKS_ENABLED) replaces C(callbacks_enabled), so name it there too.
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

    # Below this many frozen objects a play start collects nothing (site.yml's controller holds ~140,000 at its end).
    collect_above = 250_000

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._frozen_after_collection = 0

    def v2_playbook_on_play_start(self, play):
        # a full collection costs a walk of the whole heap: only where what is kept has doubled since the last one
        frozen = gc.get_freeze_count()
        if frozen > max(self.collect_above, 2 * self._frozen_after_collection):
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            self._frozen_after_collection = gc.get_freeze_count()

    def v2_runner_on_start(self, host, task):
        # sent by the controller right before it forks the worker for this host and task
        gc.freeze()
