#!/usr/bin/env python3
"""How much a push of the commits since BASE carries, counted the way the project's submissions are limited.

A submission (the commits pushed at once) may carry at most 256 MiB of diffs, counted as text: binary files in
full (``git diff --binary``), a renamed file as removed and added, a file added by one commit and removed by a later
one twice. The reference grid's units are ≈ 21 MiB each by that count (their gzipped columns and side files are
binary), so a session that stages many units, or moves records from one folder to another, can exceed it and lose
the whole push (2026-12-05: seed 4 promoted by copying, plus five units). Run this before stopping, and the grid
driver (``run_grid_units.sh``) runs it before each unit when ``GRID_BUDGET_BASE`` is set.

    python scripts/maintainer/submission_size.py --base d53800e                 # HEAD's commits since d53800e
    python scripts/maintainer/submission_size.py --base d53800e main grid --budget-mib 200

Commits reachable from several tips count once; a commit whose change equals an earlier one's (a cherry-pick of a
grid unit onto main) counts once too. A merge counts its whole diff against its first parent (what it brings to the
branch it lands on), even when that repeats a merged commit's: merging the grid branch into main counts each unit
twice, so bring grid units onto main by merging main into the grid's tip, the grid first (its diff is then main's
own change; reference/README.md, "Running the 1.0 grid"). Exit status 1 when the total is over ``--budget-mib``.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
from dataclasses import dataclass

MIB = 1024 * 1024
#: the most a submission's diffs may add up to
SUBMISSION_LIMIT_MIB = 256


@dataclass(frozen=True)
class CommitSize:
    commit: str
    subject: str
    bytes: int


def _git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout


def commit_sizes(repo: str, base: str, tips: list[str]) -> list[CommitSize]:
    """Each commit reachable from ``tips`` but not from ``base``, oldest first, with the bytes of its binary diff
    against its first parent; a commit whose change (paths and blobs) equals an earlier one's is left out."""
    listed = _git(repo, "rev-list", "--reverse", "--topo-order", f"^{base}", *tips).decode().split()
    seen: set[str] = set()
    sizes = []
    for commit in listed:
        parents = _git(repo, "rev-list", "--parents", "-n", "1", commit).decode().split()[1:]
        parent = parents[0] if parents else "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's empty tree
        change = hashlib.sha256(_git(repo, "diff-tree", "-r", "--no-renames", parent, commit)).hexdigest()
        if change in seen and len(parents) < 2:
            continue
        seen.add(change)
        size = len(_git(repo, "diff", "--binary", "--no-renames", "--no-color", parent, commit))
        subject = _git(repo, "log", "-1", "--format=%s", commit).decode().strip()
        sizes.append(CommitSize(commit[:12], subject, size))
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the last commit already landed (the submission's start)")
    parser.add_argument("tips", nargs="*", default=["HEAD"], help="branches or commits to count (default: HEAD)")
    parser.add_argument("--budget-mib", type=float, default=SUBMISSION_LIMIT_MIB,
                        help=f"exit 1 above this many MiB (default: the limit, {SUBMISSION_LIMIT_MIB})")
    parser.add_argument("--repo", default=".", help="the git checkout (default: here)")
    parser.add_argument("--largest", type=int, default=10, help="how many of the largest commits to list")
    args = parser.parse_args(argv)
    sizes = commit_sizes(args.repo, args.base, args.tips)
    total = sum(s.bytes for s in sizes)
    for entry in sorted(sizes, key=lambda s: -s.bytes)[:args.largest]:
        print(f"{entry.bytes / MIB:8.1f} MiB  {entry.commit}  {entry.subject[:90]}")
    print(f"{len(sizes)} commits since {args.base}: {total / MIB:.1f} MiB of {args.budget_mib:g} MiB")
    return 1 if total > args.budget_mib * MIB else 0


if __name__ == "__main__":
    sys.exit(main())
