#!/bin/bash
# Installs the named Debian packages that are not installed yet (as root). The package lists are
# updated at most once an hour across scripts and `lastexam env install` (the stamp below, touched
# only after an update without errors), one process at a time (the lock `lastexam env install`
# takes too), and a concurrent apt-get or dpkg is waited for instead of failing.
# Usage: scripts/apt-install.sh PKG...
set -euo pipefail
stamp=/var/lib/apt/lists/lastexam-updated  # envs/system.py names the same stamp and lock
locks="${LASTEXAM_HOME:-/var/lib/lastexam}/locks"
need=()
for pkg in "$@"; do
    dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null | grep -qx installed || need+=("$pkg")
done
((${#need[@]})) || exit 0
export DEBIAN_FRONTEND=noninteractive
mkdir -p "$locks"
exec 9>"$locks/apt.lock"
flock 9
if [[ -z "$(find "$stamp" -mmin -60 2>/dev/null)" ]]; then
    # The lists' own lock is not covered by DPkg::Lock::Timeout: another updater (apt-daily) is
    # waited for here.
    for attempt in 1 2 3 4 5 6 7 8 9 10; do
        if out="$(apt-get update -q -o APT::Update::Error-Mode=any 2>&1)"; then
            touch "$stamp"
            break
        fi
        if [[ $attempt == 10 ]] || ! grep -q "Could not get lock" <<<"$out"; then
            echo "$out" >&2
            exit 1
        fi
        sleep 15
    done
fi
apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 "${need[@]}" || {
    rm -f "$stamp"  # lists that may be stale are updated by the next attempt
    exit 1
}
