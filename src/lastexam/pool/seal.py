"""`lastexam seal` and `lastexam pool release`: task folders into a sealed pool and back."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from lastexam.errors import LastexamError
from lastexam.pool import bundle
from lastexam.pool.canary import canary_key
from lastexam.pool.model import PART_FILES, PARTS, POOL_FILE, PoolManifest, TaskCard
from lastexam.pool.sealed import SealedTask, is_pool, load_manifest
from lastexam.task.load import Task, tree_hash


def seal_task(task: Task, recipients: list[Any], pool_dir: Path, release: dt.date) -> TaskCard:
    files = bundle.task_files(task.path)
    by_part: dict[str, list[tuple[str, Path]]] = {p: [] for p in PARTS}
    for rel, path in files:
        by_part[bundle.part_of(rel)].append((rel, path))
    plain = {
        "spec": (task.path / "task.toml").read_bytes(),
        "agent": bundle.pack(by_part["agent"]),
        "hidden": bundle.pack(by_part["hidden"]),
    }
    folder = pool_dir / task.id
    tmp = pool_dir / f".{task.id}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    hashes = {}
    for part, data in plain.items():
        sealed = bundle.encrypt(data, recipients)
        (tmp / PART_FILES[part]).write_bytes(sealed)
        hashes[part] = hashlib.sha256(sealed).hexdigest()
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(tmp, folder)
    s = task.spec
    return TaskCard(
        id=s.id, cluster=s.cluster, subdomain=s.subdomain, tier=s.tier, software=s.software,
        environment=s.environment, timeout_s=s.timeout_s, gui=s.gui, probes=task.uses_probes,
        canary=s.canary, release_date=release, content_hash=tree_hash(task.path),
        grader_version=task.grader_hash, bundle=hashes,
    )


def seal(tasks: list[Task], recipients: list[str], pool_dir: Path, release: dt.date,
         log=print) -> PoolManifest:
    """Seal each task into pool_dir, adding to (or replacing in) an existing pool of the same
    recipients; pool.toml is rewritten after each task."""
    from lastexam.pool.keys import parse_recipient

    parsed = [parse_recipient(r) for r in recipients]
    names = sorted({str(r) for r in parsed})
    manifest = PoolManifest(recipients=names)
    if is_pool(pool_dir):
        manifest = load_manifest(pool_dir)
        if sorted(manifest.recipients) != names:
            raise LastexamError("this pool is sealed to other recipients; seal into a new folder "
                                "or give the same --recipient list", path=pool_dir / POOL_FILE)
    cards = {c.id: c for c in manifest.task}
    # Every refusal before the first bundle is written: a task re-sealed here and not yet on
    # its card would no longer match it.
    canaries = {canary_key(c.canary): c.id for c in manifest.task}
    for task in tasks:
        if task.sealed:
            raise LastexamError("already sealed: give a task folder", path=task.path)
        other = canaries.setdefault(canary_key(task.spec.canary), task.id)
        if other != task.id:
            raise LastexamError(f"canary {task.spec.canary} is already used by {other} in this pool",
                                path=task.path / "task.toml")
    for task in tasks:  # pool.toml after each task: a seal cut short leaves a pool that opens
        cards[task.id] = seal_task(task, parsed, pool_dir, release)
        manifest = PoolManifest(recipients=names, task=sorted(cards.values(), key=lambda c: c.id))
        write_manifest(manifest, pool_dir)
        log(f"sealed {task.id}")
    return manifest


def release(tasks: list[SealedTask], until: dt.date, dest: Path, log=print) -> list[Path]:
    """Unseal every task due on `until` into dest/<cluster>/<id> (refusing to overwrite)."""
    written = []
    for task in sorted(tasks, key=lambda t: t.id):
        if task.card.release_date > until:
            continue
        target = dest / task.card.cluster
        if (target / task.id).exists():
            raise LastexamError("already exists: a release never overwrites a task folder",
                                path=target / task.id)
        target.mkdir(parents=True, exist_ok=True)
        staging = target / f".{task.id}.release"
        shutil.rmtree(staging, ignore_errors=True)
        try:
            folder = task.unseal(staging)
            os.replace(folder, target / task.id)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        written.append(target / task.id)
        log(f"released {task.id} (due {task.card.release_date}) -> {target / task.id}")
    return written


def write_manifest(manifest: PoolManifest, pool_dir: Path) -> None:
    """pool.toml, written by hand (the fields are flat: strings, numbers, lists, one table)."""

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int | float):
            return str(v)
        if isinstance(v, dt.date):
            return v.isoformat()
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        return json.dumps(str(v), ensure_ascii=False)

    lines = ["# A sealed task pool (docs/private-pool.md). Cards are public; bundles are not.",
             f"format = {manifest.format}", f"recipients = {value(manifest.recipients)}", ""]
    for card in manifest.task:
        lines.append("[[task]]")
        lines += [f"{k} = {value(v)}" for k, v in card.model_dump().items()]
        lines.append("")
    tmp = pool_dir / f".{POOL_FILE}.tmp"
    tmp.write_text("\n".join(lines))
    os.replace(tmp, pool_dir / POOL_FILE)
