"""What the management side meets at one address: `python3 lab/reach.py ADDRESS '[PORT, ...]'` prints
{port: "open" | "refused" | the error's name} as JSON. Used by the firewall's tests (tests/integration/test_firewall.py,
molecule/mp/verify.yml), from the controller or from a throwaway container on the lab's management network."""

import json
import socket
import sys


def main() -> None:
    result = {}
    for port in json.loads(sys.argv[2]):
        try:
            socket.create_connection((sys.argv[1], int(port)), timeout=2).close()
            result[port] = "open"
        except ConnectionRefusedError:
            result[port] = "refused"
        except OSError as error:
            result[port] = type(error).__name__
    print(json.dumps(result))


if __name__ == "__main__":
    main()
