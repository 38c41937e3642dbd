#!/bin/bash
# Installs what the harness itself needs on Debian (as root): bubblewrap, Debian's Python with
# venv, and lastexam in .venv. Idempotent. Usage: scripts/setup.sh [--test]
set -euo pipefail
cd "$(dirname "$0")/.."

# gcc and libc6-dev build the exec-log shim (src/lastexam/usage/execlog.c).
packages=(bubblewrap python3 python3-venv util-linux socat gcc libc6-dev git ca-certificates)
# The desktop of GUI trials (src/lastexam/desktop): X server, window manager, panel, recorder,
# the window monitor's python3-xlib, fonts, and the X tools agents are promised on PATH.
packages+=(xvfb openbox tint2 ffmpeg python3-xlib fonts-dejavu-core xdotool x11-utils
           x11-xserver-utils)
# The tests drive the viewer in Debian's Chromium (Playwright never downloads a browser here).
[[ "${1:-}" == "--test" ]] && packages+=(chromium fonts-dejavu-core)
need=()
for pkg in "${packages[@]}"; do
    dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null | grep -qx installed || need+=("$pkg")
done
if ((${#need[@]})); then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${need[@]}"
fi

if [[ ! -x .venv/bin/python ]]; then
    /usr/bin/python3 -m venv .venv
fi
extras=""
# [interop]: Inspect AI, for the interop tests (tests/interop; Harbor has a venv of its own).
# [ray]: Ray, for tests/test_ray_backend.py.
[[ "${1:-}" == "--test" ]] && extras="[test,interop,ray]"
.venv/bin/pip install -q --disable-pip-version-check -e ".${extras}"
