"""semverkit: Semantic Versioning 2.0.0 versions and npm-style ranges, in pure Python."""

from semverkit.ranges import InvalidRange, Range, max_satisfying, satisfies
from semverkit.version import InvalidVersion, Version

__version__ = "2.4.0"
__all__ = ["InvalidRange", "InvalidVersion", "Range", "Version", "max_satisfying", "satisfies"]
