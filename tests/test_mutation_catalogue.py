"""The mutation catalogue cannot rot silently: every mutation still applies to src/ (its old text
occurs exactly once, and the mutant still parses), is documented, and names tests that exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.mutations.catalogue import ROOT, Mutation, load
from tests.mutations.run import sample

MUTATIONS = load()


def test_the_catalogue_is_large_and_names_are_unique() -> None:
    names = [m.name for m in MUTATIONS]
    assert len(names) >= 30
    assert len(set(names)) == len(names), sorted(n for n in names if names.count(n) > 1)


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.name for m in MUTATIONS])
def test_mutation_applies_and_names_real_tests(mutation: Mutation, tmp_path: Path) -> None:
    source = ROOT / mutation.file
    assert source.is_file(), f"{mutation.name}: no file {mutation.file}"
    copy = tmp_path / mutation.file
    copy.parent.mkdir(parents=True)
    copy.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    mutation.apply(tmp_path)  # raises unless the old text occurs exactly once
    mutant = copy.read_text(encoding="utf-8")
    assert mutant != source.read_text(encoding="utf-8")
    if copy.suffix == ".py":
        ast.parse(mutant, str(copy))  # a mutant that does not parse tests nothing
    for node in mutation.tests:
        path, _, rest = node.partition("::")
        test_file = ROOT / path
        assert path.startswith("tests/") and test_file.is_file(), f"{mutation.name}: no test file {path}"
        if rest:
            function = re.sub(r"\[.*\]$", "", rest.split("::")[-1])
            assert re.search(rf"^\s*def {re.escape(function)}\(", test_file.read_text(), re.M), (
                f"{mutation.name}: no test {function} in {path}")


def test_a_bad_entry_is_named_with_its_file_and_field(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text(
        '[[mutation]]\nname = "no-tests"\nguarantee = "a guarantee long enough to pass"\n'
        'description = "does something"\nfile = "src/x.py"\nold = "a"\nnew = "b"\ntests = []\n')
    with pytest.raises(ValueError, match=r"bad\.toml: mutation #1 \(no-tests\): field 'tests'"):
        load(tmp_path)


def test_the_daily_sample_rotates_over_the_whole_catalogue() -> None:
    n = 7
    days = range(100, 100 + -(-len(MUTATIONS) // n))
    picked = [sample(MUTATIONS, n, day) for day in days]
    assert all(len(p) == n for p in picked)
    assert {m.name for p in picked for m in p} == {m.name for m in MUTATIONS}
    assert sample(MUTATIONS, n, 100) == picked[0] and picked[0] != picked[1]
