#!/usr/bin/env python
"""One-time migration (1.0.0.dev0): give the committed prediction files written before they recorded a schedule
the schedule of the plan that wrote them, where their checkpoints are no longer kept.

``gecobench reference --record-schedules`` does this where the weights are (the checkpoint's own info file is the
evidence). Seed 0's first 17 files were written on a machine that is gone. Each was written by
``write_predictions`` for a checkpoint that ``checkpoint_is_current`` accepted, that is, one trained with the
schedule of the plan at the commit its provenance names. This script reads that plan from the repository's history
(``git archive`` of the commit into a temporary folder, imported in a child process), compares it with today's
plan, and records the schedule only where the two plans agree on every field; a file whose plan changed since is
left unverified (so it retrains). The ``schedule_recorded`` block says so. Remove after tagging 1.0.0.

    python scripts/maintainer/record_schedules_from_history.py            # what it would do
    python scripts/maintainer/record_schedules_from_history.py --write    # write, then commit the files
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

from gecobench.fingerprinted import SHA256_FIELD, fingerprint
from gecobench.provenance import REPO_ROOT, utc_now
from gecobench.reference import (
    PREDICTIONS_UNHASHED,
    ReferencePlan,
    ZooUnit,
    predictions_state,
    read_predictions,
    schedule_record,
)

# Run in the old commit's tree: every cell's preset, overrides and resolved fields, as that plan defined them.
_OLD_PLAN = """
import dataclasses, json, sys
from gecobench.reference import ReferencePlan
from gecobench.models.training import make_schedule
plan = ReferencePlan(seeds=(0,))
out = {}
for unit in plan.zoo_units():
    preset, overrides = plan.schedule_for(unit.regime, unit.config)
    out[unit.key] = {"preset": preset, "overrides": overrides,
                     "fields": dataclasses.asdict(make_schedule(preset, **overrides))}
json.dump(out, sys.stdout)
"""


def plan_at(commit: str) -> dict[str, dict]:
    """Every cell's schedule as the plan at ``commit`` defined it (seed-independent), keyed by the seed-0 key."""
    # the packages the plan imports, as far as the commit has them (the base layer geco_common came later)
    top = subprocess.run(["git", "-C", str(REPO_ROOT), "ls-tree", "--name-only", commit], check=True,
                         capture_output=True, text=True).stdout.split()
    packages = [name for name in ("geco_common", "geco_dataset", "gecobench") if name in top]
    with tempfile.TemporaryDirectory() as tree:
        archive = subprocess.run(["git", "-C", str(REPO_ROOT), "archive", commit, *packages],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
        result = subprocess.run([sys.executable, "-c", _OLD_PLAN], check=True, capture_output=True, text=True,
                                cwd=tree, env={**os.environ, "PYTHONPATH": tree})
    return json.loads(result.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="write the schedules (default: only say what)")
    args = parser.parse_args()
    plan = ReferencePlan()
    old_plans: dict[str, dict[str, dict]] = {}
    changed = 0
    for unit in plan.zoo_units():
        path = plan.predictions_file(unit)
        if not path.is_file() or predictions_state(plan, unit) != "unverified":
            continue
        document = read_predictions(path, unit=unit)
        commit = document["provenance"]["git_commit"].split("+")[0]
        if commit not in old_plans:
            old_plans[commit] = plan_at(commit)
        then = old_plans[commit].get(ZooUnit(unit.config, unit.regime, 0).key)
        now = schedule_record(plan, unit)
        if then is None or json.loads(json.dumps(then)) != now:
            print(f"{path}: the plan at {commit[:12]} had {then}, today's has {now}: left unverified (retrain)")
            continue
        print(f"{path}: the plan at {commit[:12]} = today's ({now['preset']} {now['overrides']})")
        if not args.write:
            continue
        document = {k: v for k, v in document.items() if k != SHA256_FIELD}
        document["schedule"] = now
        document["schedule_recorded"] = {
            "from": f"the reference plan at commit {commit}, which wrote the file for a checkpoint it accepted as "
                    "current (the checkpoint was not kept); the plan's schedule is unchanged since",
            "at": utc_now()}
        document[SHA256_FIELD] = fingerprint(document, PREDICTIONS_UNHASHED)
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        changed += 1
    print(f"{changed} file(s) written" if args.write else "dry run: --write to record them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
