"""Desktop start in a sandbox: the time from launching the sandbox to the X server and window
manager being ready, and to the whole desktop being ready (panel, monitor, recorder: the
moment the agent's command starts), against a sandbox without a desktop; then the memory
(RSS and PSS sums) and CPU of an idle desktop with its recorder and monitor. Target: X server
and window manager ready in under 1.5 s.

    python benchmarks/desktop_start.py [--starts 10] [--idle 5]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import time
from pathlib import Path

from lastexam.desktop.launch import wrap
from lastexam.desktop.spec import DesktopSpec
from lastexam.layout import AgentSandbox
from lastexam.run.runner import new_run_id
from lastexam.run.workspace import RunWorkArea
from lastexam.sandbox.base import Mount, SandboxLimits, SandboxRequest
from lastexam.sandbox.bwrap import BwrapProvider

READY = re.compile(r"^([0-9.]+) X server and window manager ready", re.M)
# Run by the agent's command after an idle while: memory and CPU of every desktop process.
MEASURE = r"""
sleep "$1"
for p in /proc/[0-9]*; do
    comm=$(cat $p/comm 2>/dev/null) || continue
    case "$comm" in Xvfb|openbox|tint2|ffmpeg|python3) ;; *) continue ;; esac
    rss=$(awk '/^VmRSS/ {print $2}' $p/status)
    pss=$(awk '/^Pss:/ {print $2}' $p/smaps_rollup)
    ticks=$(awk '{print $14 + $15}' $p/stat)
    echo "PROC $comm $rss $pss $ticks"
done
"""


def one_start(provider: BwrapProvider, scratch: Path, i: int, desktop: bool,
              idle: float) -> tuple[float, float, float, list[list[str]]]:
    """Seconds from launch to X+WM ready and to the agent's start; the idle measures."""
    folder = scratch / f"desktop-{i}-{desktop}"
    folder.mkdir()
    if provider.uid is not None:
        os.chown(folder, provider.uid, provider.uid)
    out = scratch / f"out-{i}-{desktop}"
    argv = ["/bin/sh", "-c", 'date +%s.%N; [ "$1" = 0 ] || sh -c "$2" measure "$1"', "sh",
            str(idle), MEASURE]
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}
    mounts: list[Mount] = []
    if desktop:
        wrapped = wrap(DesktopSpec(), argv, env, folder, 120)
        argv, env, mounts = wrapped.argv, wrapped.env, wrapped.mounts
    request = SandboxRequest(
        name=f"desktopbench-{i}-{desktop}", argv=argv, mounts=mounts, env=env, cwd="/",
        limits=SandboxLimits(wall_s=120, memory_mb=4096, max_processes=256, watch_bytes=0),
        stdout=out, stderr=scratch / f"err-{i}-{desktop}",
    )
    launched = time.time()
    result = provider.run(request)
    if result.exit_code != 0:
        raise SystemExit(f"start {i} failed ({result.exit_code}): {request.stderr.read_text()[-500:]}")
    lines = out.read_text().splitlines()
    agent = float(lines[0]) - launched
    ready = agent
    if desktop:
        log = (folder / "session.log").read_text()
        ready = float(READY.search(log).group(1)) - launched
    return ready, agent, launched, [ln.split()[1:] for ln in lines if ln.startswith("PROC ")]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--idle", type=float, default=5.0, help="seconds idle before measuring")
    args = parser.parse_args()
    area = RunWorkArea.for_run(new_run_id("desktopbench"))
    area.prepare()
    provider = BwrapProvider(area.etc)
    problems = provider.preflight()
    if problems:
        raise SystemExit("; ".join(problems))
    ready, agent, plain = [], [], []
    with tempfile.TemporaryDirectory(dir=area.root) as d:
        scratch = Path(d)
        os.chmod(scratch, 0o755)
        for i in range(args.starts):
            plain.append(one_start(provider, scratch, i, False, 0)[1])
            r, a, _, _ = one_start(provider, scratch, i, True, 0)
            ready.append(r)
            agent.append(a)
        procs = one_start(provider, scratch, args.starts, True, args.idle)[3]
    area.remove()
    print(f"{args.starts} starts, medians (max):")
    print(f"  sandbox alone, launch to command:        {statistics.median(plain):.3f} s ({max(plain):.3f})")
    print(f"  desktop, launch to X + window manager:   {statistics.median(ready):.3f} s ({max(ready):.3f})")
    print(f"  desktop, launch to agent's command:      {statistics.median(agent):.3f} s ({max(agent):.3f})")
    hz = os.sysconf("SC_CLK_TCK")
    rss = sum(int(p[1]) for p in procs) / 1024
    pss = sum(int(p[2]) for p in procs) / 1024
    print(f"idle desktop after {args.idle:.0f} s at {DesktopSpec().screen} ({len(procs)} processes):"
          f" RSS sum {rss:.0f} MB, PSS sum {pss:.0f} MB")
    for comm, kb, pss_kb, ticks in sorted(procs):
        print(f"  {comm:8} RSS {int(kb) / 1024:6.1f} MB  PSS {int(pss_kb) / 1024:6.1f} MB"
              f"  CPU {int(ticks) / hz:5.2f} s since start")
    print(f"(AgentSandbox.DESKTOP is {AgentSandbox.DESKTOP})")


if __name__ == "__main__":
    main()
