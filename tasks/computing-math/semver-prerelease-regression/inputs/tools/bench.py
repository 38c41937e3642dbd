"""The benchmark workload of the performance budget: sort a registry's versions, resolve
ranges against them, pick the newest match of a few ranges."""

from __future__ import annotations

import contextlib
import random

import semverkit

RANGES = ["^1.2.0", "~2.4.1", ">=1.0.0-rc.1 <1.0.1", "^0.3.0 || ^0.4.0", ">3.0.0-beta.2 <=3.1.0"]


def registry(seed: int = 20240611, n: int = 600) -> list[str]:
    rng = random.Random(seed)
    tags = ["alpha", "beta", "rc", "dev", "pre", "canary"]
    out = []
    for _ in range(n):
        major, minor, patch = rng.randint(0, 3), rng.randint(0, 6), rng.randint(0, 12)
        text = f"{major}.{minor}.{patch}"
        if rng.random() < 0.45:
            ids = [rng.choice(tags)] + [str(rng.randint(0, 14)) for _ in range(rng.randint(0, 2))]
            text += "-" + ".".join(ids)
        if rng.random() < 0.1:
            text += f"+build.{rng.randint(1, 999)}"
        out.append(text)
    out += ["latest", "next", "v1.2.3", "1.2"]
    return out


def workload() -> None:
    tags = registry()
    versions = []
    for tag in tags:
        with contextlib.suppress(semverkit.InvalidVersion):
            versions.append(semverkit.Version.parse(tag))
    ordered = sorted(versions)
    for rng_text in RANGES:
        for v in ordered[::7]:
            semverkit.satisfies(v, rng_text)
        if hasattr(semverkit, "max_satisfying"):
            semverkit.max_satisfying(tags, rng_text)
