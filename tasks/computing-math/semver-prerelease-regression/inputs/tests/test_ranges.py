import pytest
from semverkit import InvalidRange, Range, Version, satisfies


@pytest.mark.parametrize("version,text,expected", [
    ("1.4.2", "^1.2.0", True),
    ("2.0.0", "^1.2.0", False),
    ("0.3.9", "^0.3.1", True),
    ("0.4.0", "^0.3.1", False),
    ("1.2.9", "~1.2.3", True),
    ("1.3.0", "~1.2.3", False),
    ("1.3.0-beta.1", "^1.2.0", False),
    ("1.3.0-beta.1", ">=1.3.0-beta.0 <2.0.0", True),
    ("5.0.0", "^1.0.0 || >=5.0.0", True),
    ("3.0.0", "*", True),
])
def test_satisfies(version, text, expected):
    assert satisfies(version, text) is expected


def test_contains_version():
    assert Version.parse("1.0.0") in Range(">=1.0.0 <2.0.0")


def test_invalid_range():
    with pytest.raises(InvalidRange):
        Range(">=banana")
