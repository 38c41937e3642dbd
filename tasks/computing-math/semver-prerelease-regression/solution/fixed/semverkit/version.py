"""Semantic Versioning 2.0.0 version numbers: parsing, precedence, bumping."""

from __future__ import annotations

import re
from functools import total_ordering

_VERSION = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


class InvalidVersion(ValueError):
    """The text is not a SemVer 2.0.0 version."""


def _prerelease_key(prerelease: tuple[str, ...]) -> tuple:
    """SemVer 2.0.0 section 11: a release ranks above its prereleases; identifiers compare one
    by one, numeric ones numerically and below alphanumeric ones (ASCII order), and a shorter
    list ranks lower when it is a prefix of the other."""
    if not prerelease:
        return (1,)
    return (0, tuple((0, int(i), "") if i.isdigit() else (1, 0, i) for i in prerelease))


@total_ordering
class Version:
    """An immutable version; equality and order follow SemVer precedence (build ignored)."""

    __slots__ = ("_precedence", "build", "major", "minor", "patch", "prerelease")

    def __init__(self, major: int, minor: int = 0, patch: int = 0,
                 prerelease: tuple[str, ...] = (), build: tuple[str, ...] = ()) -> None:
        if min(major, minor, patch) < 0:
            raise InvalidVersion("version numbers must be non-negative")
        self.major = major
        self.minor = minor
        self.patch = patch
        self.prerelease = tuple(prerelease)
        self.build = tuple(build)
        self._precedence = (major, minor, patch, _prerelease_key(self.prerelease))

    @classmethod
    def parse(cls, text: str) -> Version:
        match = _VERSION.match(text.strip()) if isinstance(text, str) else None
        if match is None:
            raise InvalidVersion(f"not a semantic version: {text!r}")
        major, minor, patch, pre, build = match.groups()
        return cls(int(major), int(minor), int(patch),
                   tuple(pre.split(".")) if pre else (),
                   tuple(build.split(".")) if build else ())

    @property
    def is_prerelease(self) -> bool:
        return bool(self.prerelease)

    @property
    def release(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    def bump(self, part: str) -> Version:
        """The next release: 'major', 'minor' or 'patch' (a prerelease of it bumps to it)."""
        if part == "major":
            if self.prerelease and self.minor == 0 and self.patch == 0:
                return Version(self.major)
            return Version(self.major + 1)
        if part == "minor":
            if self.prerelease and self.patch == 0:
                return Version(self.major, self.minor)
            return Version(self.major, self.minor + 1)
        if part == "patch":
            if self.prerelease:
                return Version(self.major, self.minor, self.patch)
            return Version(self.major, self.minor, self.patch + 1)
        raise ValueError(f"unknown part {part!r}: use 'major', 'minor' or 'patch'")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._precedence == other._precedence

    def __lt__(self, other: Version) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._precedence < other._precedence

    def __hash__(self) -> int:
        return hash(self._precedence)

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(self.prerelease)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def __repr__(self) -> str:
        return f"Version('{self}')"
