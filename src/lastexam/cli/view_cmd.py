"""lastexam view."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def view(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run directories to browse.")],
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0: any free port).")] = 8765,
) -> None:
    """Browse runs and trials in a local web viewer: trajectory, rubric with evidence, grader
    output, output files, exec log, usage and timings."""
    from lastexam.viewer.environ import restart_without_secrets

    restart_without_secrets()  # before anything is read or served
    from lastexam.cli.output import err
    from lastexam.errors import LastexamError
    from lastexam.store.db import Store
    from lastexam.viewer.server import serve

    for d in run_dirs:
        Store(d).close()  # a clear error now, not a broken page later
    names = [d.resolve().name for d in run_dirs]
    if len(set(names)) != len(names):
        raise LastexamError("run directories must have different folder names")
    server = serve(run_dirs, port)
    host, bound = server.server_address[:2]
    print(f"http://{host}:{bound}/", flush=True)
    err.print("serving on 127.0.0.1 only; Ctrl-C to stop")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
