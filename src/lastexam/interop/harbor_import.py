"""`lastexam import harbor`: a Harbor task folder as a lastexam task folder that passes the
static gates. The Harbor verifier becomes the grader (harbor_files/imported_grader.py runs
tests/test.sh in the grading sandbox); the tests go to reference/tests/, hidden from the agent;
the task gets a fresh canary. A task lastexam exported (with [metadata.lastexam]) gets its
fields back; any other takes the cluster, subdomain, environment and tier it is given."""

from __future__ import annotations

import json
import re
import shutil
import stat
import uuid
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from lastexam.config_file import load_model
from lastexam.errors import LastexamError, describe_validation_error
from lastexam.interop.harbor_spec import (
    DEFAULT_WORKDIR,
    ExportedFrom,
    HarborTaskConfig,
    ImportedGrading,
    checked_workdir,
)
from lastexam.interop.toml_out import dumps
from lastexam.layout import AgentSandbox
from lastexam.paths import default_tasks_dir
from lastexam.task.spec import MAX_TIMEOUT_S, TaskSpec
from lastexam.taxonomy import load_taxonomy

# Harbor's difficulty words (Terminal-Bench's) to lastexam tiers, when no --tier is given.
TIER_OF_DIFFICULTY = {"easy": "near-term", "medium": "near-term", "hard": "full-spectrum"}
CANARY_LINE = re.compile(r"^\s*(<!--.*canary.*-->|#.*canary.*)\s*$", re.IGNORECASE)
EXPORTED_INPUTS = "task/inputs"  # where an exported task's tests/ hold the pristine inputs
NOT_INPUTS = ("Dockerfile", "docker-compose.yaml", "docker-compose.yml", "compose.yaml")
# A Harbor task folder past any of these is refused.
MAX_IMPORT_BYTES = 2 * 1024**3
MAX_IMPORT_ENTRIES = 100_000
MAX_IMPORT_DEPTH = 32


@dataclass(frozen=True)
class ImportChoices:
    cluster: str | None = None  # None: the exported task's, else "other"
    subdomain: str | None = None  # None: the exported task's, else the cluster's first
    environment: str | None = None  # None: the exported task's, else "base"
    tier: str | None = None  # None: the exported task's, else from the difficulty


def import_task(src: Path, out: Path | None, choices: ImportChoices) -> Path:
    """Write the task as out/<id>/ (default: the project's tasks/<cluster>/<id>/)."""
    _check_tree(src)
    cfg = load_model(src / "task.toml", HarborTaskConfig, what="Harbor task.toml")
    for required in ("instruction.md", "tests/test.sh"):
        if not (src / required).is_file():
            raise LastexamError(f"a Harbor task needs {required}", path=src / required)
    exported = _exported(cfg, src)
    old_canary = _exported_canary(src) if exported else ""
    canary = str(uuid.uuid4())
    spec = _spec(src, cfg, exported, choices, canary)
    dest = (out or default_tasks_dir() / spec.cluster) / spec.id
    if dest.exists():
        raise LastexamError("already exists: remove it or choose another --out", path=dest)
    workdir = cfg.environment.workdir or _dockerfile_workdir(src) or DEFAULT_WORKDIR
    paths = ({AgentSandbox.OUTPUT: "output", AgentSandbox.INPUTS: "inputs"} if exported
             else {workdir: "output"})
    dest.mkdir(parents=True)
    (dest / "task.toml").write_text(dumps(spec.model_dump(exclude={"desktop"}, exclude_none=True)))
    instruction = _strip_canary((src / "instruction.md").read_text(encoding="utf-8", errors="replace"))
    if not exported:
        instruction = _moved(instruction, workdir) + _where_note(workdir)
    (dest / "instruction.md").write_text(f"<!-- lastexam canary {canary} -->\n{instruction}")
    _inputs(src, dest / "inputs", exported is not None)
    _reference(src, dest / "reference", exported, old_canary, canary,
               ImportedGrading(canary=canary, source=cfg.task.name if cfg.task and cfg.task.name
                               else src.name, paths=paths,
                               # within the grading sandbox's own limit
                               timeout_s=min(cfg.verifier.timeout_sec,
                                             spec.limits.grader_timeout_s)))
    files = resources.files("lastexam.interop").joinpath("harbor_files")
    (dest / "grader.py").write_text(files.joinpath("imported_grader.py").read_text())
    _solution(src, dest / "solution", None if exported else workdir)
    _fixtures(dest / "fixtures")
    return dest


def _check_tree(src: Path) -> None:
    """The folder holds only folders and regular files, within the caps: a link would have
    the import copy what it points at (a host file, the whole disk, a loop), a FIFO would block
    it, and folders nested past the recursion limit would crash the copy."""
    if not src.is_dir():
        raise LastexamError("not a folder: give a Harbor task folder", path=src)
    total = entries = 0
    stack = [(src, 0)]
    while stack:
        folder, depth = stack.pop()
        for path in folder.iterdir():
            entries += 1
            rel = path.relative_to(src).as_posix()
            if entries > MAX_IMPORT_ENTRIES:
                raise LastexamError(f"the task folder holds more than {MAX_IMPORT_ENTRIES} files "
                                    "and folders", path=src)
            st = path.lstat()
            if stat.S_ISDIR(st.st_mode):
                if depth + 1 >= MAX_IMPORT_DEPTH:
                    raise LastexamError(f"{rel} is nested more than {MAX_IMPORT_DEPTH} folders deep",
                                        path=path)
                stack.append((path, depth + 1))
                continue
            if not stat.S_ISREG(st.st_mode):
                kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
                raise LastexamError(f"{rel} is {kind}: a Harbor task to import holds only folders "
                                    "and regular files", path=path)
            total += st.st_size
            if total > MAX_IMPORT_BYTES:
                raise LastexamError(f"the task folder holds more than {MAX_IMPORT_BYTES} bytes "
                                    f"(at {rel})", path=src)


def _exported(cfg: HarborTaskConfig, src: Path) -> ExportedFrom | None:
    data = cfg.metadata.get("lastexam")
    if data is None:
        return None
    try:
        return ExportedFrom.model_validate(data)
    except ValidationError as e:
        raise LastexamError(describe_validation_error(e).replace("field '", "field 'metadata.lastexam."),
                            path=src / "task.toml") from None


def _exported_canary(src: Path) -> str:
    """The canary an exported task's tests/lastexam.json names (replaced by the new one)."""
    path = src / "tests" / "lastexam.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LastexamError("a task with [metadata.lastexam] needs tests/lastexam.json", path=path) from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise LastexamError(f"not readable JSON: {e}", path=path) from None
    canary = data.get("canary", "") if isinstance(data, dict) else None
    if not isinstance(canary, str):
        raise LastexamError("must be a JSON object whose canary is a string", path=path, field="canary")
    return canary


def _spec(src: Path, cfg: HarborTaskConfig, ex: ExportedFrom | None, choices: ImportChoices,
          canary: str) -> TaskSpec:
    tax = load_taxonomy()
    cluster = choices.cluster or (ex.cluster if ex else "other")
    found = tax.cluster(cluster)
    if found is None:
        raise LastexamError(f"unknown cluster {cluster!r}; known: {', '.join(c.id for c in tax.clusters)}")
    subdomain = choices.subdomain or (ex.subdomain if ex and ex.cluster == cluster else found.subdomains[0].id)
    sub = tax.subdomain(subdomain)
    name = cfg.task.name.rsplit("/", 1)[-1] if cfg.task and cfg.task.name else src.resolve().name
    difficulty = _clip(str(cfg.metadata.get("difficulty", "")).lower(), 100)
    description = (cfg.task.description if cfg.task else "").strip()
    if len(description) < 10:  # lastexam's summary takes 10 to 2000 characters
        description = f"Harbor task {name}, imported" + (f": {description}" if description else ".")
    limits = {"grader_timeout_s": int(min(3600, max(5, cfg.verifier.timeout_sec + 60)))}
    if cfg.environment.memory_mb:
        limits["memory_mb"] = min(65536, max(64, cfg.environment.memory_mb))
    fields = {
        "id": ex.id if ex else _slug(name),
        "title": ex.title if ex else f"{_clip(name, 170)} (imported from Harbor)",
        "summary": ex.summary if ex else _clip(description, 2000),
        "cluster": cluster, "subdomain": subdomain,
        "soc": ex.soc if ex and ex.subdomain == subdomain else (sub.soc[:1] if sub else []),
        "tier": choices.tier or (ex.tier if ex else TIER_OF_DIFFICULTY.get(difficulty, "near-term")),
        "tier_rationale": ex.tier_rationale if ex else
        f"Imported from Harbor (difficulty: {difficulty or 'not given'}); review the tier.",
        "software": ex.software if ex else ["bash"],
        "environment": choices.environment or (ex.environment if ex else "base"),
        "gui": ex.gui if ex else False,
        "timeout_s": int(min(MAX_TIMEOUT_S, max(10, cfg.agent.timeout_sec or 7200))),
        # Harbor names no deliverables: the whole output folder, until the author lists them.
        "outputs": ex.outputs if ex else ["."],
        "canary": canary,
        "limits": limits,
    }
    try:
        return TaskSpec.model_validate(fields)
    except ValidationError as e:
        raise LastexamError(f"cannot make a lastexam task of it: {describe_validation_error(e)}",
                            path=src / "task.toml") from None


def _clip(text: str, most: int) -> str:
    return text if len(text) <= most else text[:most - 3] + "..."


def _slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:63]
    return slug if len(slug) >= 2 else f"harbor-{slug or 'task'}"


def _dockerfile_workdir(src: Path) -> str | None:
    docker = src / "environment" / "Dockerfile"
    if not docker.is_file():
        return None
    found = re.findall(r"(?im)^\s*WORKDIR\s+(\S+)\s*$", docker.read_text(errors="replace"))
    if not found or not found[-1].startswith("/"):
        return None
    try:
        return checked_workdir(found[-1])
    except ValueError as e:
        raise LastexamError(f"its last WORKDIR: {e}", path=docker) from None


def _strip_canary(text: str) -> str:
    lines = text.splitlines(keepends=True)
    while lines and CANARY_LINE.match(lines[0]):
        lines.pop(0)
    return "".join(lines)


def _moved(text: str, workdir: str) -> str:
    """The task's working folder, named in its instruction or scripts, as /task/output."""
    return re.sub(r"(?<![\w./-])" + re.escape(workdir) + r"(?![\w.-])", AgentSandbox.OUTPUT, text)


def _where_note(workdir: str) -> str:
    return (f"\n\n---\nThis task was written for a container whose working folder is {workdir}: "
            f"here that folder is {AgentSandbox.OUTPUT}, where the deliverables go. The files of "
            f"its environment folder are in {AgentSandbox.INPUTS}/.\n")


def _inputs(src: Path, dest: Path, exported: bool) -> None:
    env = src / "environment"
    if exported and (env / EXPORTED_INPUTS).is_dir():
        shutil.copytree(env / EXPORTED_INPUTS, dest)
    elif env.is_dir():
        shutil.copytree(env, dest, ignore=lambda _d, names: [n for n in names if n in NOT_INPUTS])
    dest.mkdir(exist_ok=True)
    if not any(dest.iterdir()):  # the static gates want inputs: say there are none
        (dest / "README.txt").write_text("This task has no input files.\n")


def _reference(src: Path, dest: Path, ex: ExportedFrom | None, old: str, canary: str,
               grading: ImportedGrading) -> None:
    tests = dest / "tests"
    shutil.copytree(src / "tests", tests, ignore=shutil.ignore_patterns("__pycache__"))
    inputs_in_tests: list[str] = []
    if ex is not None:
        if (tests / EXPORTED_INPUTS).is_dir():  # a copy of inputs/: restored at grading time
            shutil.rmtree(tests / EXPORTED_INPUTS)
            inputs_in_tests.append(EXPORTED_INPUTS)
        for p in (p for p in tests.rglob("*") if p.is_file() and old):
            data = p.read_bytes()
            if old.encode() in data:
                p.write_bytes(data.replace(old.encode(), canary.encode()))
    doc = grading.model_dump()
    if inputs_in_tests:
        doc["inputs_in_tests"] = inputs_in_tests
    (dest / "harbor.json").write_text(json.dumps(doc, indent=1) + "\n")


def _solution(src: Path, dest: Path, workdir: str | None) -> None:
    if (src / "solution").is_dir():
        shutil.copytree(src / "solution", dest, ignore=shutil.ignore_patterns("__pycache__"))
    dest.mkdir(exist_ok=True)
    solve = dest / "solve.sh"
    if not solve.is_file():
        solve.write_text("#!/bin/bash\necho 'the Harbor task had no solve.sh: write the oracle' >&2\nexit 1\n")
    elif workdir is not None:
        solve.write_text(_moved(solve.read_text(errors="replace"), workdir))
    solve.chmod(0o755)


FIXTURES = {
    "negative/empty": ('mistake = "no deliverable at all (imported task: review)"\nkind = "shortcut"\n'
                       "score_min = 0.0\nscore_max = 0.0\n", "true\n"),
    "negative/junk": ('mistake = "every file of the oracle\'s output replaced by junk (imported task: review)"\n'
                      "score_min = 0.0\nscore_max = 0.0\n",
                      'cd "$ORACLE_OUTPUT"\nfind . -type f | while read -r f; do\n'
                      '    mkdir -p "$OUT/$(dirname "$f")"\n    printf junk > "$OUT/$f"\ndone\n'),
    "positive/oracle-copy": ('variant = "the oracle\'s output as it is (imported task: add another valid one)"\n',
                             'cp -R "$ORACLE_OUTPUT"/. "$OUT"/\n'),
}


def _fixtures(dest: Path) -> None:
    for name, (toml, script) in FIXTURES.items():
        d = dest / name
        d.mkdir(parents=True)
        (d / "fixture.toml").write_text(toml)
        (d / "make.sh").write_text("#!/bin/bash\nset -euo pipefail\n" + script)
