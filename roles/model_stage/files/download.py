"""The head's download of one model revision, run with the runtime image's own huggingface_hub (inside a container
on the head, the hub cache mounted at HF_HOME). Arguments: model, revision, the inventory host and the cache's path
on the host (both for the messages). Before any byte moves it asks the hub how large the revision is and refuses
when the cache's filesystem has less free space (a partial earlier download is counted again: the check errs on the
side of room). Prints the snapshot's path."""
import os
import shutil
import sys

from huggingface_hub import HfApi, snapshot_download

MESSAGES = {
    "NO_ROOM": "[F17] {host}: {model} {revision} is {needed:.1f} GB on the hub, but the filesystem of {cache} has "
               "{free:.1f} GB free. Nothing was downloaded. Fix: free space there, or point vllm_cluster_hf_cache_dir "
               "at a larger disk (or bring the weights in with model_stage_source).",
}


def main():
    model, revision, host, cache = sys.argv[1:5]
    info = HfApi().model_info(model, revision=revision, files_metadata=True)
    needed = sum(sibling.size or 0 for sibling in info.siblings or [])
    free = shutil.disk_usage(os.environ.get("HF_HOME", "/root/.cache/huggingface")).free
    if needed > free:
        sys.exit(MESSAGES["NO_ROOM"].format(host=host, model=model, revision=revision, needed=needed / 1e9,
                                            free=free / 1e9, cache=cache))
    print(snapshot_download(model, revision=revision))


main()
