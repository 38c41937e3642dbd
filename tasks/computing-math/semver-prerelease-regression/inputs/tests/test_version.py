import pytest
from semverkit import InvalidVersion, Version


def test_parse_fields():
    v = Version.parse("1.4.0-rc.2+build.77")
    assert (v.major, v.minor, v.patch) == (1, 4, 0)
    assert v.prerelease == ("rc", "2")
    assert v.build == ("build", "77")
    assert str(v) == "1.4.0-rc.2+build.77"


@pytest.mark.parametrize("text", ["1.2", "v1.2.3", "01.2.3", "1.2.3-01", "1.2.3-", "1.2.3+", ""])
def test_invalid(text):
    with pytest.raises(InvalidVersion):
        Version.parse(text)


def test_release_above_prerelease():
    assert Version.parse("1.0.0-alpha") < Version.parse("1.0.0")
    assert Version.parse("1.0.0") < Version.parse("1.0.1-alpha")


def test_build_ignored_in_precedence():
    assert Version.parse("1.0.0+a") == Version.parse("1.0.0+b")


def test_bump():
    assert Version.parse("1.3.0-rc.1").bump("minor") == Version(1, 3, 0)
    assert Version.parse("1.3.4").bump("major") == Version(2)
    with pytest.raises(ValueError):
        Version(1).bump("build")
