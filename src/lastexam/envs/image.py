"""`lastexam env build-image NAME`: a local container image for an environment, with no
registry: a Debian root file system made with debootstrap, the environment's Debian packages
installed in it with apt-get, imported with `podman import` (or `docker import`). The
environment's venv is not in the image: the container provider mounts it read-only at the
same path as the bubblewrap provider does. An image is tagged by what it holds, and not
rebuilt while that tag exists."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from lastexam.envs import locking
from lastexam.envs.manage import Environment
from lastexam.errors import LastexamError
from lastexam.paths import home_subdir
from lastexam.sandbox.engine import detect, missing_engine

RECIPE = "4"  # bumped when the steps below change what an image holds
MIRROR_VAR = "LASTEXAM_DEBIAN_MIRROR"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
DEFAULT_RELEASE = "bookworm"
# What every sandbox uses besides the environment's own packages: the grading harness, the
# `command` agent's shell tools, the npm agents' bridge to the gateway (socat) and Node.js
# (Debian's: too old for gemini-cli, which needs 20).
HARNESS_APT = ("python3", "mount", "procps", "socat", "nodejs")
TAG_PREFIX = "lastexam-env-"


def debian_release(os_release: Path = Path("/etc/os-release")) -> str:
    """The host's Debian release (its venvs' Python must be the image's), else bookworm."""
    try:
        fields = dict(
            line.split("=", 1) for line in os_release.read_text().splitlines() if "=" in line
        )
    except OSError:
        return DEFAULT_RELEASE
    if fields.get("ID", "").strip('"') != "debian":
        return DEFAULT_RELEASE
    return fields.get("VERSION_CODENAME", "").strip('"') or DEFAULT_RELEASE


def apt_packages(env: Environment) -> list[str]:
    return sorted({*HARNESS_APT, *env.spec.apt})


def image_tag(env: Environment) -> str:
    """lastexam-env-NAME:HASH, the hash of the recipe, the Debian release, the package list and
    the environment's lock."""
    parts = [RECIPE, debian_release(), " ".join(apt_packages(env)), locking.lock_hash(env) or ""]
    digest = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]
    return f"{TAG_PREFIX}{env.name}:{digest}"


def build_image(env: Environment, *, log=print, force: bool = False) -> str:
    """Build the environment's image unless its tag exists; returns the tag."""
    engine = detect()
    if engine is None:
        raise LastexamError(missing_engine())
    tag = image_tag(env)
    with _build_lock(env.name):
        if not force and engine.image_exists(tag):
            log(f"{tag} exists")
            return tag
        if os.geteuid() != 0:
            raise LastexamError("building an image needs root (debootstrap): run "
                                f"`sudo lastexam env build-image {env.name}`, then "
                                f"`sudo podman save {tag} | podman load` for your user")
        if not shutil.which("debootstrap"):
            raise LastexamError("debootstrap is not installed (apt-get install debootstrap)")
        replaced = engine.call("image", "inspect", "--format", "{{.Id}}", tag).stdout.strip()
        root = home_subdir("images") / f"{env.name}.rootfs"
        _remove_rootfs(root)
        try:
            _make_rootfs(root, apt_packages(env), log)
            log(f"{engine.name} import -> {tag}")
            _import(engine.cmd("import", "--change", f"LABEL lastexam.env={env.name}", "-", tag),
                    root)
        finally:
            _remove_rootfs(root)
        # Images of the environment's earlier contents (and the one --force replaced) are not
        # used again.
        listed = engine.call("images", "--format", "{{.Repository}}:{{.Tag}}", tag.split(":")[0])
        old = [t for t in listed.stdout.split() if t.rsplit(":", 1)[1] != tag.rsplit(":", 1)[1]]
        for image in [*old, *([replaced] if replaced else [])]:
            engine.call("rmi", image)
    return tag


def _make_rootfs(root: Path, packages: list[str], log) -> None:
    release = debian_release()
    mirror = os.environ.get(MIRROR_VAR, DEFAULT_MIRROR)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive", "LC_ALL": "C"}
    log(f"debootstrap --variant=minbase {release} ({mirror})")
    _checked(["debootstrap", "--variant=minbase", release, str(root), mirror], env)
    security = mirror.removesuffix("/debian") + "/debian-security"
    (root / "etc/apt/sources.list").write_text(
        f"deb {mirror} {release} main\n"
        f"deb {mirror} {release}-updates main\n"
        f"deb {security} {release}-security main\n"
    )
    policy = root / "usr/sbin/policy-rc.d"  # no service starts while packages install
    policy.write_text("#!/bin/sh\nexit 101\n")
    policy.chmod(0o755)
    log(f"apt-get install {' '.join(packages)}")
    apt = ["chroot", str(root), "apt-get", "-q", "-o", "APT::Sandbox::User=root"]
    _checked([*apt, "update"], env)
    _checked([*apt, "install", "-y", "--no-install-recommends", *packages], env)
    _checked([*apt, "clean"], env)
    policy.unlink()
    shutil.rmtree(root / "var/lib/apt/lists", ignore_errors=True)
    (root / "var/lib/apt/lists/partial").mkdir(parents=True)
    # As in the bubblewrap sandbox: /var/tmp is the private /tmp, and there is no /root.
    shutil.rmtree(root / "var/tmp")
    (root / "var/tmp").symlink_to("../tmp")
    shutil.rmtree(root / "root")


def _import(argv: list[str], root: Path) -> None:
    tar = subprocess.Popen(["tar", "-C", str(root), "--numeric-owner", "-cf", "-", "."],
                           stdout=subprocess.PIPE)
    try:
        proc = subprocess.run(argv, stdin=tar.stdout, capture_output=True, text=True)
    finally:
        if tar.stdout:
            tar.stdout.close()
        tar.wait()
    if proc.returncode != 0 or tar.returncode != 0:
        raise LastexamError(f"`{' '.join(argv[:2])}` failed: {proc.stderr[-2000:]}")


def _checked(argv: list[str], env: dict[str, str]) -> None:
    proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise LastexamError(f"`{' '.join(argv[:6])} ...` failed:\n{proc.stdout[-3000:]}")


def _remove_rootfs(root: Path) -> None:
    # A root file system holds device nodes and files of other owners: root removes it whole.
    if root.exists():
        subprocess.run(["rm", "-rf", "--one-file-system", str(root)], check=False)


@contextlib.contextmanager
def _build_lock(name: str):
    with open(home_subdir("locks") / f"image-{name}.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield
