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
scripts/apt-install.sh "${packages[@]}"

if [[ ! -x .venv/bin/python ]]; then
    /usr/bin/python3 -m venv .venv
fi
extras=""
# [interop]: Inspect AI, for the interop tests (tests/interop; Harbor has a venv of its own).
# [ray]: Ray, for tests/test_ray_backend.py.
[[ "${1:-}" == "--test" ]] && extras="[test,interop,ray]"
.venv/bin/pip install -q --disable-pip-version-check -e ".${extras}"

# Each sandbox's processes are moved into cgroups of their own. Without the kernel's
# favordynmods (Linux >= 6.0) the first move after a quiet spell waits for an RCU grace period:
# 2.4-6 ms per sandbox here, against 0.2 with it (benchmarks/cgroup_costs.py). The setting is the
# machine's (forks and exits take a slower path), lasts until reboot, and goes on the cgroup2
# mount, whose flag covers the v1 hierarchies too. docs/sandbox.md.
if [[ $EUID -eq 0 ]]; then
    # Fields, not the source's name ("cgroup2", "cgroup", "none" on other hosts).
    favours() { awk '$3 == "cgroup2" {if (("," $4 ",") ~ /,favordynmods,/) print "yes"; else print "no"; exit}' /proc/mounts; }
    cg2="$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts || true)"
    if [[ -n "$cg2" && "$(favours)" == no ]]; then
        # In a cgroup namespace other than the host's the remount succeeds and changes nothing.
        if mount -o remount,favordynmods "$cg2" 2>/dev/null && [[ "$(favours)" == yes ]]; then
            echo "setup: $cg2 remounted with favordynmods (faster sandbox starts)"
        else
            echo "setup: could not remount $cg2 with favordynmods; sandboxes start a few ms slower"
        fi
    fi
fi
