"""Lays a model folder out in a hub cache the way huggingface_hub's download leaves it: every file a blob named by
its sha256 under models--ORG--NAME/blobs/, the snapshot's entries symlinks to those blobs, refs/main naming the
commit. The lab's stand-in for an operator's earlier download on the head (no hub is reachable here); the commit
is derived from the files, so recreating the lab gives the same one. Arguments: source folder, HF_HOME, model id."""
import hashlib
import os
import shutil
import sys


def main():
    source, cache_root, model = sys.argv[1], sys.argv[2], sys.argv[3]
    repo = os.path.join(cache_root, "hub", "models--" + model.replace("/", "--"))
    files = {}
    for folder, _dirs, names in os.walk(source):
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                files[os.path.relpath(path, source)] = hashlib.sha256(handle.read()).hexdigest()
    commit = hashlib.sha1("".join(f"{k}:{v}\n" for k, v in sorted(files.items())).encode()).hexdigest()
    snapshot = os.path.join(repo, "snapshots", commit)
    os.makedirs(os.path.join(repo, "blobs"), exist_ok=True)
    os.makedirs(os.path.join(repo, "refs"), exist_ok=True)
    for relative, digest in sorted(files.items()):
        blob = os.path.join(repo, "blobs", digest)
        if not os.path.exists(blob):
            shutil.copyfile(os.path.join(source, relative), blob)
        link = os.path.join(snapshot, relative)
        os.makedirs(os.path.dirname(link), exist_ok=True)
        if not os.path.islink(link):
            os.symlink(os.path.relpath(blob, os.path.dirname(link)), link)
    with open(os.path.join(repo, "refs", "main"), "w", encoding="utf-8") as handle:
        handle.write(commit)
    print(commit)


main()
