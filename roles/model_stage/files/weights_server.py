"""The head's throwaway server for staging weights: serves the files of one snapshot's manifest read-only over HTTP,
bound to the head's interconnect address only (nothing listens on management), with byte ranges so an interrupted
copy resumes. Arguments: address, port, folder, idle seconds, startup seconds, manifest (JSON: name -> {size}).
It exits once no request is in flight and none came for `idle` seconds (or none at all within `startup` seconds), so
nothing stays listening after the copy. Prints one line when it listens.

It runs as root over a hub cache others may write, so it serves nothing but the manifest's names, each reached from
the snapshot folder without following a link, except a snapshot entry's own link into its model's blobs/ (resolved
here, by hand); what it opens must be a regular file of the manifest's size. A name outside the manifest, a link
elsewhere, a device or a file of another size answers 404."""
import http.server
import json
import os
import stat
import sys
import threading
import time
import urllib.parse

NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK


class Activity:
    """Requests in flight and when the last one ended: a long file keeps the server up while it streams."""
    lock = threading.Lock()
    in_flight = 0
    last = None

    @classmethod
    def begin(cls):
        with cls.lock:
            cls.in_flight += 1

    @classmethod
    def end(cls):
        with cls.lock:
            cls.in_flight -= 1
            cls.last = time.monotonic()


class Snapshot:
    """The snapshot folder, its model folder (two levels up: models--ORG--NAME/snapshots/<commit>) and the manifest."""

    def __init__(self, folder, manifest):
        self.folder = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        self.repo = os.open("../..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=self.folder)
        self.sizes = {name: int(entry["size"]) for name, entry in manifest.items()}

    def open(self, name):
        """A descriptor of the manifest's file `name`, or None."""
        size = self.sizes.get(name)
        parts = name.split("/")
        if size is None or any(part in ("", ".", "..") for part in parts):
            return None
        folder = os.dup(self.folder)
        try:
            for part in parts[:-1]:
                inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=folder)
                os.close(folder)
                folder = inner
            if stat.S_ISLNK(os.lstat(parts[-1], dir_fd=folder).st_mode):
                handle = self._open_blob(os.readlink(parts[-1], dir_fd=folder), len(parts))
            else:
                handle = os.open(parts[-1], NOFOLLOW, dir_fd=folder)
        except OSError:
            return None
        finally:
            os.close(folder)
        if handle is None:
            return None
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode) or info.st_size != size:
            os.close(handle)
            return None
        return handle

    def _open_blob(self, target, depth):
        """The blob a snapshot entry links to, as huggingface_hub links them: ../ up to the model folder, blobs/<name>."""
        prefix = "../" * (depth + 1) + "blobs/"
        blob = target[len(prefix):]
        if not target.startswith(prefix) or not blob or "/" in blob or blob in (".", ".."):
            return None
        blobs = os.open("blobs", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=self.repo)
        try:
            return os.open(blob, NOFOLLOW, dir_fd=blobs)
        finally:
            os.close(blobs)


class SnapshotHandler(http.server.BaseHTTPRequestHandler):
    snapshot = None

    def log_message(self, *args):
        pass

    def handle_one_request(self):
        Activity.begin()
        try:
            super().handle_one_request()
        finally:
            Activity.end()

    def do_GET(self):
        handle = self.send_head()
        if handle is not None:
            with handle:
                while True:
                    block = handle.read(8 * 1024 * 1024)
                    if not block:
                        break
                    self.wfile.write(block)

    def do_HEAD(self):
        handle = self.send_head()
        if handle is not None:
            handle.close()

    def send_head(self):
        name = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).lstrip("/")
        fd = self.snapshot.open(name)
        if fd is None:
            self.send_error(404)
            return None
        handle = os.fdopen(fd, "rb")
        size = self.snapshot.sizes[name]
        wanted = self.headers.get("Range", "")
        start = 0
        if wanted.startswith("bytes="):
            try:
                start = min(int(wanted[6:].split("-")[0] or 0), size)
            except ValueError:
                handle.close()
                self.send_error(400, "bad range")
                return None
            handle.seek(start)
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{max(size - 1, start)}/{size}")
        else:
            self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size - start))
        self.end_headers()
        return handle


def main():
    if len(sys.argv) != 7:
        sys.exit("usage: weights_server.py ADDRESS PORT FOLDER IDLE STARTUP MANIFEST_JSON")
    address, port, folder = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    idle, startup = float(sys.argv[4]), float(sys.argv[5])
    SnapshotHandler.snapshot = Snapshot(folder, json.loads(sys.argv[6]))
    try:
        server = http.server.ThreadingHTTPServer((address, port), SnapshotHandler)
    except OSError as exc:
        sys.exit(f"could not listen on {address}:{port}: {exc}")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"serving {folder} on {address}:{port}", flush=True)
    began = time.monotonic()
    while True:
        time.sleep(0.5)
        with Activity.lock:
            quiet = Activity.in_flight == 0
            since = time.monotonic() - (Activity.last if Activity.last is not None else began)
            limit = idle if Activity.last is not None else startup
        if quiet and since >= limit:
            break
    server.shutdown()


main()
