"""vLLM's CPU platform with a Ray device key, so vLLM's Ray executor places one rank per lab node."""

from __future__ import annotations

from vllm.platforms.cpu import CpuPlatform


class LabCpuRayPlatform(CpuPlatform):
    # vLLM's CPU platform has "" here, which its Ray executor refuses ("current platform cpu does
    # not support ray"). Lab nodes declare one GPU each to Ray (--num-gpus=1), so asking for "GPU"
    # bundles places the ranks exactly as on a real GPU cluster: one per node, the first on
    # node:<driver's interconnect ip>.
    ray_device_key: str = "GPU"

    @classmethod
    def get_device_communicator_cls(cls) -> str:
        # Named, not imported: importing vLLM's communicators while vLLM resolves its platform fails
        # (they import current_platform).
        return "inferops_lab_vllm_platform.communicator.HostLocalShmCpuCommunicator"
