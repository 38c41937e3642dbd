"""Version ranges in the npm style: comparators, caret, tilde, unions with '||'."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable

from semverkit.version import InvalidVersion, Version

_OPS: dict[str, Callable[[Version, Version], bool]] = {
    ">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt, "=": operator.eq,
}
Comparator = tuple[str, Version]


class InvalidRange(ValueError):
    """The text is not a range this library understands."""


def _expand(token: str) -> list[Comparator]:
    if token in ("*", "x"):
        return [(">=", Version(0))]
    if token[0] in "^~":
        low = _version(token[1:], token)
        if token[0] == "~":
            high = Version(low.major, low.minor + 1)
        elif low.major:
            high = Version(low.major + 1)
        elif low.minor:
            high = Version(0, low.minor + 1)
        else:
            high = Version(0, 0, low.patch + 1)
        return [(">=", low), ("<", high)]
    for op in (">=", "<=", ">", "<", "="):
        if token.startswith(op):
            return [(op, _version(token[len(op):], token))]
    return [("=", _version(token, token))]


def _version(text: str, token: str) -> Version:
    try:
        return Version.parse(text)
    except InvalidVersion:
        raise InvalidRange(f"bad comparator {token!r}") from None


class Range:
    """A union of comparator sets; a version is in it when it meets every comparator of a set."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.sets: list[list[Comparator]] = []
        for part in text.split("||"):
            tokens = part.split()
            comparators = [c for token in tokens for c in _expand(token)] if tokens else _expand("*")
            self.sets.append(comparators)

    def __contains__(self, version: Version) -> bool:
        return any(self._set_allows(comparators, version) for comparators in self.sets)

    @staticmethod
    def _set_allows(comparators: list[Comparator], version: Version) -> bool:
        if not all(_OPS[op](version, bound) for op, bound in comparators):
            return False
        if not version.prerelease:
            return True
        # a prerelease only matches a set that names a prerelease of the same release
        return any(bound.prerelease and bound.release == version.release
                   for _, bound in comparators)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Range({self.text!r})"


def satisfies(version: str | Version, range_text: str) -> bool:
    """Whether the version is in the range; a version string that does not parse raises."""
    if isinstance(version, str):
        version = Version.parse(version)
    return version in Range(range_text)


def max_satisfying(versions: Iterable[str | Version], range_text: str) -> Version | None:
    """The highest version of `versions` in the range, or None; strings that are not versions
    (registry tags such as 'latest') are skipped."""
    allowed = Range(range_text)
    best: Version | None = None
    for item in versions:
        if isinstance(item, str):
            try:
                item = Version.parse(item)
            except InvalidVersion:
                continue
        if item in allowed and (best is None or best < item):
            best = item
    return best
