#!/bin/bash
# Installs the named Debian packages that are not installed yet (as root). The package lists are
# updated at most once an hour across scripts and `lastexam env install` (the stamp below), and a
# concurrent apt-get or dpkg is waited for instead of failing. Usage: scripts/apt-install.sh PKG...
set -euo pipefail
stamp=/var/lib/apt/lists/lastexam-updated  # envs/system.py reads the same stamp
need=()
for pkg in "$@"; do
    dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null | grep -qx installed || need+=("$pkg")
done
((${#need[@]})) || exit 0
export DEBIAN_FRONTEND=noninteractive
if [[ -z "$(find "$stamp" -mmin -60 2>/dev/null)" ]]; then
    apt-get update -q -o DPkg::Lock::Timeout=600
    touch "$stamp"
fi
apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 "${need[@]}"
