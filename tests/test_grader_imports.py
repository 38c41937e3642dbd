"""What the warm grading worker preloads for a task: the third-party modules its grader's files
import, never the standard library, the task's own modules or generate.py's."""

from __future__ import annotations

from pathlib import Path

from lastexam.task.grader_imports import grader_imports


def test_third_party_modules_of_the_grader_files_only(tmp_path: Path) -> None:
    (tmp_path / "grader.py").write_text(
        "import json\nimport numpy as np\nfrom scipy.stats import norm\nfrom . import sibling\n"
        "from lastexam.grading import Rubric\nimport study_model\n\n"
        "def grade(ctx):\n    import pandapower.networks\n    from helpers import x\n")
    (tmp_path / "study_model.py").write_text("import networkx\n")
    (tmp_path / "helpers").mkdir()
    (tmp_path / "generate.py").write_text("import matplotlib\n")
    (tmp_path / "broken.py").write_text("def (:\n")
    assert grader_imports(tmp_path) == ("networkx", "numpy", "pandapower.networks", "scipy.stats")


def test_a_task_module_named_like_a_package_is_not_preloaded(tmp_path: Path) -> None:
    (tmp_path / "grader.py").write_text("import pandas\nimport numpy\n")
    (tmp_path / "pandas.py").write_text("")
    assert grader_imports(tmp_path) == ("numpy",)
