"""vLLM's CPU communicator, with shared memory only between ranks on one host."""

from __future__ import annotations

import os
import socket
import time

import torch.distributed
from vllm.distributed.device_communicators.cpu_communicator import CpuCommunicator


class HostLocalShmCpuCommunicator(CpuCommunicator):
    def _all_group_ranks_share_shm_group_name(self) -> bool:
        # Ranks started by Ray compute the same shared-memory group name on every node, so vLLM
        # would pick its shared-memory all-reduce and fail to open a segment that lives on the
        # other node ("open shm in SHMManager failed"). Shared memory also needs one host: compare
        # host names too, and fall back to torch.distributed (gloo over the interconnect) otherwise.
        hosts: list[str] = [""] * self.world_size
        torch.distributed.all_gather_object(hosts, socket.gethostname(), group=self.device_group)
        return len(set(hosts)) == 1 and super()._all_group_ranks_share_shm_group_name()

    def all_reduce(self, input_):
        # The lab's slow release (tests of playbooks/upgrade.yml): an image built FROM this one with
        # INFEROPS_LAB_ALL_REDUCE_DELAY_MS=N waits N ms in every tensor-parallel all-reduce, so each generated
        # token takes longer, as a release with a slower kernel or a worse NCCL setting does.
        delay = float(os.environ.get("INFEROPS_LAB_ALL_REDUCE_DELAY_MS") or 0)
        if delay > 0:
            time.sleep(delay / 1000)
        return super().all_reduce(input_)
