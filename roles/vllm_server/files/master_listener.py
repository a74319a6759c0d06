"""A throwaway listener on vLLM's rendezvous address, so that every node can prove it opens TCP to it before any
rank starts (F19). Arguments: address, port, how many connections to wait for, seconds at most. Each connection is
read until the other side closes it (so no TIME_WAIT stays on the port rank 0 binds next). Exits 0 after the
expected connections or the deadline; 1 with the reason when it cannot listen."""
import socket
import sys
import time

address, port, expected, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
family = socket.AF_INET6 if ":" in address else socket.AF_INET
server = socket.socket(family, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    server.bind((address, port))
    server.listen(16)
except OSError as exc:
    sys.exit(f"could not listen on {address}:{port}: {exc}")
deadline = time.monotonic() + seconds
accepted = 0
while accepted < expected and time.monotonic() < deadline:
    server.settimeout(max(0.1, deadline - time.monotonic()))
    try:
        connection = server.accept()[0]
    except socket.timeout:
        break
    accepted += 1
    connection.settimeout(2)
    try:
        while connection.recv(1024):
            pass
    except OSError:
        pass
    connection.close()
server.close()
print(f"accepted {accepted} of {expected} connections on {address}:{port}")
