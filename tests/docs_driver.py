"""Executes one documentation page's blocks in order, the way a reader follows it (tests/test_docs.py).

Standard library only, so that it runs under any interpreter: imported by the docs tests (the checkout's
environment, in-process), or started as a script with an installed wheel's interpreter
(``python docs_driver.py STEPS.json``), where every ``python`` block then imports the installed package.

A step is ``{"kind": "python" | "bash" | "write", "where": "docs/page.md:LINE", "code": ..., "target": ...}``;
bash steps hold one command each. Python steps share one namespace per page.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any


class StepFailed(AssertionError):
    """A documented step did not succeed; the message names the page and line."""


def run_steps(steps: list[dict[str, Any]], workspace: Path, env: dict[str, str], namespace_name: str) -> int:
    """Run the steps in ``workspace`` (python ones in this process, with ``env`` as its environment); returns how
    many python or bash steps ran."""
    namespace: dict[str, object] = {"__name__": namespace_name}
    old_cwd, old_env, old_path = os.getcwd(), dict(os.environ), list(sys.path)
    os.chdir(workspace)
    os.environ.clear()
    os.environ.update(env)
    sys.path.insert(0, str(workspace))  # as when `python` is started in the reader's folder
    executed = 0
    try:
        for step in steps:
            if step["kind"] == "write":
                destination = workspace / step["target"]
                destination.parent.mkdir(parents=True, exist_ok=True)
                destination.write_text(step["code"], encoding="utf-8")
            elif step["kind"] == "python":
                try:
                    exec(compile(step["code"], step["where"], "exec"), namespace)  # noqa: S102 - our own docs
                except Exception as err:  # name the page and line, then re-raise with the traceback
                    raise StepFailed(f"{step['where']}: python block failed: {err!r}") from err
                executed += 1
            elif step["kind"] == "bash":
                done = subprocess.run(["bash", "-c", f"set -euo pipefail; {step['code']}"], check=False,
                                      cwd=workspace, env=env, capture_output=True, text=True, timeout=1500)
                if done.returncode != 0:
                    raise StepFailed(f"{step['where']}: `{step['code']}` exited {done.returncode}\n"
                                     f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}")
                executed += 1
            else:
                raise ValueError(f"{step.get('where')}: unknown step kind {step['kind']!r}")
    finally:
        os.chdir(old_cwd)
        os.environ.clear()
        os.environ.update(old_env)
        sys.path[:] = old_path
    return executed


def main(argv: list[str]) -> int:
    """``docs_driver.py STEPS.json``: the file holds ``{"steps", "workspace", "env", "namespace"}``; prints the
    number of executed steps as the last line."""
    (path,) = argv
    job = json.loads(Path(path).read_text(encoding="utf-8"))
    try:
        executed = run_steps(job["steps"], Path(job["workspace"]), job["env"], job["namespace"])
    except StepFailed:
        traceback.print_exc()
        return 1
    print(executed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
