"""age identities and recipients (X25519, through pyrage): making a key, reading it back."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

from lastexam.errors import LastexamError

IDENTITY_ENV = "LASTEXAM_IDENTITY"  # path of the key file, when --identity is not given


def generate(out: Path) -> str:
    """Write a new identity to `out` (mode 0600, refusing to overwrite) and its recipient to
    `out`.pub; returns the recipient."""
    from pyrage import x25519

    if out.exists() or out.with_name(out.name + ".pub").exists():
        raise LastexamError("already exists: a key is never overwritten", path=out)
    identity = x25519.Identity.generate()
    recipient = str(identity.to_public())
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    out.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(f"# created: {stamp}\n# public key: {recipient}\n{identity}\n")
    out.with_name(out.name + ".pub").write_text(recipient + "\n")
    return recipient


def identity_path(given: Path | None) -> Path | None:
    if given is not None:
        return given
    env = os.environ.get(IDENTITY_ENV, "").strip()
    return Path(env) if env else None


def load_identity(path: Path) -> Any:
    """The one identity of an age key file (comments and blank lines skipped)."""
    from pyrage import IdentityError, x25519

    try:
        mode = path.stat().st_mode & 0o777
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise LastexamError(f"cannot read the key file: {e}", path=path) from None
    if mode & 0o077:  # the key opens the whole pool
        raise LastexamError(f"the key file is open to other users (mode {mode:04o}): "
                            f"chmod 600 {path}", path=path)
    keys = [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    if len(keys) != 1:
        raise LastexamError(f"expected one AGE-SECRET-KEY line, found {len(keys)}", path=path)
    try:
        return x25519.Identity.from_str(keys[0])
    except (IdentityError, ValueError):
        raise LastexamError("not an age X25519 identity (AGE-SECRET-KEY-1...)", path=path) from None


def recipient_of(identity: Any) -> str:
    return str(identity.to_public())


def parse_recipient(text: str) -> Any:
    from pyrage import RecipientError, x25519

    given = text.strip()
    if not Path(given).is_file():
        try:
            return x25519.Recipient.from_str(given)
        except (RecipientError, ValueError):
            raise LastexamError(f"--recipient {given!r}: not an age X25519 recipient (age1...) "
                                "nor a file holding one") from None
    try:  # a .pub file written by keygen; its content is never echoed (it may be a secret key)
        return x25519.Recipient.from_str(Path(given).read_text().strip())
    except (OSError, UnicodeDecodeError, RecipientError, ValueError):
        raise LastexamError("--recipient: the file does not hold one age X25519 recipient "
                            "(age1...); give the key's .pub file, never the key itself",
                            path=given) from None
