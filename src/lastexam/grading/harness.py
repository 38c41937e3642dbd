"""Entry point inside the grading sandbox: python3 -S .../lastexam/grading/harness.py CONTEXT RESULT
(run as a script, not with -m: runpy would cost each grading's fresh Python an import).

Loads the task's grader.py, calls grade(ctx), prepends the input-tamper gate and writes the
rubric as JSON. A grader that raises, or returns something other than a Rubric, produces an
"error" result: the harness records it as grader_error, never as a score of 0.
"""

from __future__ import annotations

import json
import math
import os
import sys
import types
from pathlib import Path

from lastexam.grading.context import GradeContext
from lastexam.grading.files import inputs_untampered
from lastexam.grading.rubric import Check, Rubric

TAMPER_GATE = "inputs untampered"
# The host hands the harness a pipe's write end under this number. It is taken (and made
# non-inheritable) before any grader code runs, so no process the grader starts holds it: the
# result cannot be replaced by something that outlives the grader, as a file could.
RESULT_FD_VAR = "LASTEXAM_RESULT_FD"
PR_SET_DUMPABLE = 4


def take_result_fd() -> int | None:
    value = os.environ.pop(RESULT_FD_VAR, None)
    if not value:
        return None
    fd = int(value)
    os.set_inheritable(fd, False)
    return fd


def shut_out_own_uid() -> None:
    """Graders run programs on the agent's work (its package's tests, its scripts) as this
    process's uid: made non-dumpable, this process cannot be traced by them, nor its memory,
    environment or descriptors opened through /proc, by which they could write the result."""
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


# Graders the warm grading worker compiled before it forked this process (sandbox/warm_worker.py),
# by the file name a grading sees and the whole source: a grader.py holding that very source
# runs that code instead of being compiled again (a small grader's compile: 0.5 ms and a
# hundred page faults of a forked grading; a large one's, 5 ms).
_COMPILED: dict[tuple[str, bytes], types.CodeType] = {}


def _compile(source: bytes, filename: str) -> types.CodeType:
    # The one call that compiles a grader, here or in the worker: the same flags either way
    # (this module's __future__ imports are inherited by both).
    return compile(source, filename, "exec")


def precompile(source: bytes, filename: str) -> None:
    """Compile a grader ahead (in the warm worker); a grading finds it by name and source."""
    _COMPILED[(filename, source)] = _compile(source, filename)


def run_grader(ctx: GradeContext) -> Rubric:
    grader_path = ctx.task / "grader.py"
    module = types.ModuleType("lastexam_task_grader")
    module.__file__ = str(grader_path)
    sys.modules[module.__name__] = module
    sys.path.insert(0, str(ctx.task))
    source = grader_path.read_bytes()
    code = _COMPILED.get((str(grader_path), source)) or _compile(source, str(grader_path))
    exec(code, module.__dict__)
    grade = getattr(module, "grade", None)
    if not callable(grade):
        raise TypeError(f"{grader_path} defines no function grade(ctx)")
    rubric = grade(ctx)
    if not isinstance(rubric, Rubric):
        raise TypeError(f"grade(ctx) returned {type(rubric).__name__}, expected a Rubric")
    tamper = Rubric()
    pristine = ctx.inputs_pristine if ctx.inputs_pristine is not None else ctx.inputs
    tamper.gate(TAMPER_GATE, inputs_untampered(ctx.inputs_after, pristine))
    rubric.checks[:0] = tamper.checks
    if ctx.probes:
        from lastexam.grading.probe import PROBES_CHECK

        # Built here, not through Rubric.check: its evidence clip would cut the records a
        # regrade replays. Sizes are bounded by grading/probe.py's caps.
        rubric.checks.append(Check(PROBES_CHECK, 0.0, False, True, 0.0,
                                   f"{len(ctx.probes)} model probe(s)", {"probes": ctx.probes}))
    return rubric


def _finite(value: object) -> object:
    """Evidence may hold NaN or infinities read from agent output; JSON has no such numbers."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def ok_result(ctx: GradeContext, rubric: Rubric) -> str:
    """What a grading that ran to the end sends back (JSON)."""
    result = {"status": "ok", "rubric": rubric.to_dict(),
              "pending_probes": [p for p in ctx.probes if p.get("pending")]}
    return json.dumps(_finite(result), allow_nan=False, default=repr)


def main(argv: list[str]) -> int:
    context_path, result_path = Path(argv[0]), Path(argv[1])
    result_fd = take_result_fd()
    shut_out_own_uid()
    ctx = GradeContext.from_json(json.loads(context_path.read_text()))
    try:
        text = ok_result(ctx, run_grader(ctx))
        code = 0
    except BaseException:  # the grader's failure, whatever it is, is reported, not hidden
        import traceback

        text = json.dumps({"status": "error", "error": traceback.format_exc(limit=20)[-8000:]})
        code = 3
    if result_fd is not None:
        with os.fdopen(result_fd, "wb") as channel:
            channel.write(text.encode())
        return code
    tmp = result_path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, result_path)
    return code


if __name__ == "__main__":
    # Run as a script, Python put this file's folder first on sys.path; the grading library
    # comes from PYTHONPATH, and the grader must not import this folder's modules by bare name.
    del sys.path[0]
    sys.exit(main(sys.argv[1:]))
