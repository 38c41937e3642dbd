"""What Inspect AI loads through lastexam's `inspect_ai` entry point: the task lastexam/suite,
the solver lastexam/oracle, the scorer and the sandbox environment "lastexam"."""

from lastexam.interop.inspect_sandbox import LastexamSandbox
from lastexam.interop.inspect_suite import lastexam_grader, oracle, suite

__all__ = ["LastexamSandbox", "lastexam_grader", "oracle", "suite"]
