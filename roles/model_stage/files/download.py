"""The head's download of one model revision, run with the runtime image's own huggingface_hub (inside a container
on the head, the hub cache mounted at HF_HOME). Arguments: model, revision, the inventory host and the cache's path
on the host (both for the messages). Before any byte moves it asks the hub how large the revision is and refuses
when the cache's filesystem has less free space than what is not there yet (blobs already downloaded are counted
as there). While it downloads, a marker in inferops-weights/ says so: huggingface_hub writes refs/<revision> before
the files, and staging must not take an interrupted download for a whole snapshot. Prints the snapshot's path."""
import os
import shutil
import sys

from huggingface_hub import HfApi, snapshot_download

MESSAGES = {
    "NO_ROOM": "[F17] {host}: {model} {revision} needs {needed:.1f} GB more from the hub, but the filesystem of {cache} "
               "has {free:.1f} GB free. Nothing was downloaded. Fix: free space there, or point vllm_cluster_hf_cache_dir "
               "at a larger disk (or bring the weights in with model_stage_source).",
}


def missing_bytes(siblings, blobs):
    """What the revision's files need that the cache's blobs/ does not hold yet (a file stored by its sha256, as the
    hub stores large files, counts as there once its blob has its size)."""
    needed = 0
    for sibling in siblings:
        lfs = getattr(sibling, "lfs", None)
        blob = os.path.join(blobs, lfs.sha256) if lfs is not None and getattr(lfs, "sha256", "") else ""
        if blob and os.path.isfile(blob) and os.path.getsize(blob) == (sibling.size or 0):
            continue
        needed += sibling.size or 0
    return needed


def main():
    model, revision, host, cache = sys.argv[1:5]
    home = os.environ.get("HF_HOME", "/root/.cache/huggingface")
    folder = "models--" + model.replace("/", "--")
    info = HfApi().model_info(model, revision=revision, files_metadata=True)
    needed = missing_bytes(info.siblings or [], os.path.join(home, "hub", folder, "blobs"))
    free = shutil.disk_usage(home).free
    if needed > free:
        sys.exit(MESSAGES["NO_ROOM"].format(host=host, model=model, revision=revision, needed=needed / 1e9,
                                            free=free / 1e9, cache=cache))
    marker = os.path.join(home, "inferops-weights", folder + ".downloading")
    os.makedirs(os.path.dirname(marker), mode=0o755, exist_ok=True)
    with os.fdopen(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644), "w") as handle:
        handle.write(revision + "\n")
    print(snapshot_download(model, revision=revision))
    os.unlink(marker)


main()
