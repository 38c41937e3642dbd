import pytest
from semverkit import InvalidRange, Version, max_satisfying


def test_issue_412_release_candidates():
    tags = ["4.1.0-rc.9", "4.1.0-rc.10", "4.1.0-rc.11", "4.1.0"]
    assert [str(v) for v in sorted(map(Version.parse, reversed(tags)))] == tags


@pytest.mark.parametrize("low,high", [
    ("1.0.0-alpha", "1.0.0-alpha.1"),
    ("1.0.0-alpha.1", "1.0.0-alpha.beta"),
    ("1.0.0-alpha.beta", "1.0.0-beta"),
    ("1.0.0-beta.2", "1.0.0-beta.11"),
    ("1.0.0-rc.1", "1.0.0"),
    ("1.0.0-a.b", "1.0.0-a-b"),
    ("1.0.0-2", "1.0.0-10"),
    ("1.0.0-9", "1.0.0-1a"),
])
def test_semver_section_11(low, high):
    assert Version.parse(low) < Version.parse(high)
    assert not Version.parse(high) < Version.parse(low)


def test_equal_versions_hash_alike():
    a, b = Version.parse("1.0.0-rc.1+linux"), Version.parse("1.0.0-rc.1+darwin")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1


def test_max_satisfying():
    tags = ["1.2.0", "latest", "1.9.0", "v1.9.5", "2.0.0", "1.10.0-rc.1", Version(1, 4, 2)]
    assert max_satisfying(tags, "^1.2.0") == Version(1, 9, 0)
    assert max_satisfying(tags, ">=1.10.0-rc.0 <2.0.0") == Version.parse("1.10.0-rc.1")
    assert max_satisfying(tags, "^3.0.0") is None
    with pytest.raises(InvalidRange):
        max_satisfying(tags, ">=banana")
