"""`lastexam tasks new CLUSTER/NAME`: copy the task template, filled with names and a canary."""

from __future__ import annotations

import uuid
from importlib import resources
from pathlib import Path

from lastexam.errors import LastexamError
from lastexam.task.spec import SLUG
from lastexam.taxonomy import load_taxonomy


def scaffold(cluster_and_name: str, root: Path) -> Path:
    cluster_id, sep, name = cluster_and_name.partition("/")
    cluster = load_taxonomy().cluster(cluster_id)
    if not sep or cluster is None:
        known = ", ".join(c.id for c in load_taxonomy().clusters)
        raise LastexamError(f"expected CLUSTER/NAME with a known cluster ({known})")
    if not SLUG.match(name):
        raise LastexamError(f"task name {name!r}: lowercase letters, digits and '-' only")
    dest = root / cluster_id / name
    if dest.exists():
        raise LastexamError("already exists", path=dest)
    values = {
        "name": name,
        "cluster": cluster_id,
        "subdomains": ", ".join(s.id for s in cluster.subdomains),
        "canary": str(uuid.uuid4()),
    }
    template = resources.files("lastexam.task").joinpath("template")
    _copy(template, dest, values)
    (dest / "inputs").mkdir(exist_ok=True)
    (dest / "reference").mkdir(exist_ok=True)
    (dest / "solution" / "solve.sh").chmod(0o755)
    return dest


def _copy(src, dest: Path, values: dict[str, str]) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for entry in src.iterdir():
        if entry.is_dir():
            _copy(entry, dest / entry.name, values)
        elif entry.name == ".keep":
            continue
        else:
            (dest / entry.name).write_text(entry.read_text().format(**values))
