"""scripts/maintainer/submission_size.py counts a push the way submissions are limited: binary files in full, a
rename as a removal and an addition, a cherry-picked change once, a merge's diff against its first parent (main
merged into the grid's tip: the unit once)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import submission_size

MIB = submission_size.MIB


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "README").write_text("x\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "base")
    return tmp_path


def _commit(repo: Path, message: str) -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


def _unit_beside_code(repo: Path, unit_bytes: int, subject: str = "unit") -> tuple[str, str, str]:
    """A grid branch with one unit of ``unit_bytes`` random bytes, and one code commit on main beside it: (the
    commit both start from, the unit's commit, the code commit); main is checked out."""
    base = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "-b", "grid")
    (repo / "unit.bin").write_bytes(os.urandom(unit_bytes))
    unit = _commit(repo, subject)
    _git(repo, "checkout", "-q", "main")
    (repo / "code.py").write_text("print(1)\n")
    return base, unit, _commit(repo, "code")


def test_binary_files_count_in_full_and_a_move_counts_twice(repo: Path) -> None:
    base = _git(repo, "rev-parse", "HEAD")
    (repo / "staging").mkdir()
    (repo / "staging" / "a.gz").write_bytes(os.urandom(300_000))  # incompressible, as gzipped columns are
    _commit(repo, "stage")
    added = submission_size.commit_sizes(str(repo), base, ["HEAD"])
    assert [s.subject for s in added] == ["stage"] and added[0].bytes > 300_000  # base85: more than the bytes
    (repo / "store").mkdir()
    (repo / "staging" / "a.gz").rename(repo / "store" / "a.gz")
    _commit(repo, "promote by moving")
    sizes = {s.subject: s.bytes for s in submission_size.commit_sizes(str(repo), base, ["HEAD"])}
    assert sizes["promote by moving"] > 2 * 300_000  # removed and added, though git calls it a rename


def test_a_cherry_picked_unit_counts_once_and_the_budget_sets_the_exit_status(repo: Path, capsys) -> None:
    base, unit, _ = _unit_beside_code(repo, 200_000, "reference: evaluate/binary_all/seed4")
    _git(repo, "cherry-pick", unit)
    sizes = submission_size.commit_sizes(str(repo), base, ["main", "grid"])
    assert sorted(s.subject for s in sizes) == ["code", "reference: evaluate/binary_all/seed4"]
    assert submission_size.main(["--repo", str(repo), "--base", base, "main", "grid", "--budget-mib", "1"]) == 0
    assert submission_size.main(["--repo", str(repo), "--base", base, "main", "grid", "--budget-mib", "0.1"]) == 1
    assert "2 commits since" in capsys.readouterr().out


def test_a_merge_counts_what_it_brings_to_its_first_parent(repo: Path) -> None:
    base, _, _ = _unit_beside_code(repo, 100_000)
    _git(repo, "merge", "-q", "--no-edit", "grid")
    sizes = submission_size.commit_sizes(str(repo), base, ["main"])
    assert len(sizes) == 3 and sum(s.bytes for s in sizes) > 2 * 100_000


def test_main_merged_into_the_grid_tip_counts_the_unit_once_and_keeps_both_histories(repo: Path) -> None:
    # the way units come onto main once main's own commits have landed (reference/README.md)
    base, unit, landed = _unit_beside_code(repo, 100_000)
    _git(repo, "checkout", "-q", "-B", "merged", "grid")
    _git(repo, "merge", "-q", "--no-edit", "main")
    sizes = submission_size.commit_sizes(str(repo), base, ["merged"])
    assert len(sizes) == 3 and 100_000 < sum(s.bytes for s in sizes) < 2 * 100_000
    for commit in (unit, landed):  # neither the unit's commit nor main's landed one is rewritten
        _git(repo, "merge-base", "--is-ancestor", commit, "merged")
