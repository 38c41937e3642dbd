"""Which ways to an X display work from where this runs: its socket file, its abstract socket,
TCP on loopback, and a real X client (xdpyinfo). Prints one JSON object.

    python3 x_probe.py DISPLAY_NUMBER
"""

import json
import os
import socket
import subprocess
import sys


def connects(family: int, address) -> bool:
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect(address)
        return True
    except OSError:
        return False
    finally:
        s.close()


def main(n: int) -> dict:
    path = f"/tmp/.X11-unix/X{n}"
    client = subprocess.run(["xdpyinfo", "-display", f":{n}"], capture_output=True, check=False,
                            env={"PATH": "/usr/bin:/bin"})
    tcp_client = subprocess.run(["xdpyinfo", "-display", f"127.0.0.1:{n}"], capture_output=True,
                                check=False, env={"PATH": "/usr/bin:/bin"})
    return {
        "socket_file": os.path.exists(path),
        "socket_file_connects": connects(socket.AF_UNIX, path),
        "abstract_connects": connects(socket.AF_UNIX, "\0" + path),
        "tcp_connects": connects(socket.AF_INET, ("127.0.0.1", 6000 + n)),
        "xdpyinfo": client.returncode == 0,
        "xdpyinfo_tcp": tcp_client.returncode == 0,
        "env_display": os.environ.get("DISPLAY"),
        "env_xauthority": os.environ.get("XAUTHORITY"),
    }


if __name__ == "__main__":
    print("PROBE " + json.dumps(main(int(sys.argv[1]))))
