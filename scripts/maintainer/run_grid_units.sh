#!/usr/bin/env bash
# Run (config, seed) units of the 1.0 reference grid one after another, committing each as it finishes
# (reference/README.md, "Running the 1.0 grid"). Runs in a git worktree of its own so that the session's other
# work on main never mixes with the grid's commits: bring a unit onto main by merging main into the grid's tip.
#
#   scripts/maintainer/run_grid_units.sh 4:binary_subject 4:nonbinary_all     # seed:config, in this order
#
# Start it in the background at the lowest priority, in its own autogroup, so tests and benches keep their share:
#   setsid nice -n 19 bash -c 'echo 19 > /proc/self/autogroup; exec scripts/maintainer/run_grid_units.sh 4:binary_subject' \
#       > ../grid-run.log 2>&1 &
#
# Environment: GRID_WORKTREE (default ../grid, branch `grid`, made from HEAD if missing), GRID_PYTHON (default
# .venv/bin/python of this checkout). Checkpoints live in this checkout's runs/ (the worktree links to it).
# GRID_BUDGET_BASE (the last commit that landed): before each unit, stop unless the commits since it on main and
# on the grid branch leave room for one more unit (≈ 21 MiB by scripts/maintainer/submission_size.py's count) under
# GRID_BUDGET_MIB (default 200 of the 256 MiB a submission may carry). Bring finished units onto main by merging
# main into the grid's tip, the grid first (reference/README.md says how), so that the commits the records name are
# in main's history, main's own commits keep their names (a rebase of main would rewrite landed ones) and a push
# counts the unit once (a cherry-pick copies the commits under other names; merging the grid into main counts each
# unit twice). Each unit is three commits, one per stage
# (`reference: zoo/CONFIG/seedK` with the filters, `…: evaluate/…`, `…: derive/…`), so that each stage runs on a
# clean tree and its records name their commit.
set -euo pipefail

main_checkout="$(cd "$(dirname "$0")/../.." && pwd)"
worktree="${GRID_WORKTREE:-$main_checkout/../grid}"
python="${GRID_PYTHON:-$main_checkout/.venv/bin/python}"

if [ "$#" -eq 0 ]; then
    echo "usage: $0 SEED:CONFIG [SEED:CONFIG ...]" >&2
    exit 2
fi
if [ ! -d "$worktree" ]; then
    git -C "$main_checkout" worktree add -B grid "$worktree" HEAD
fi
mkdir -p "$main_checkout/runs"
[ -e "$worktree/runs" ] || ln -s "$main_checkout/runs" "$worktree/runs"
cd "$worktree"
export PYTHONPATH="$worktree" HF_HUB_OFFLINE=1

stamp() { date -u +%H:%M:%S; }
# torch's launcher starts each worker in a session of its own, and a new session is a new autogroup at the default
# weight: without this the two workers would get a third of the cores each beside one foreground job, whatever
# their nice. Give every process under PID (and PID) the driver's autogroup nice.
lower_autogroups() {
    local pid
    { [ -w "/proc/$1/autogroup" ] && echo 19 > "/proc/$1/autogroup"; } 2>/dev/null || true
    for pid in $(pgrep -P "$1" || true); do
        lower_autogroups "$pid"
    done
}
# Every stage rewrites tracked files (a retrained checkpoint's prediction file and the filters naming it, the
# timings): commit after each (`commit_stage STAGE PATH...`, the unit's $config and $seed), so the next stage runs on
# a clean tree and its records name a commit, not "+dirty" (git_commit counts modified tracked files).
commit_stage() {
    git add "${@:2}"
    git commit -q -m "reference: $1/$config/seed$seed" || echo "$1/$config/seed$seed: nothing new to commit"
}
budget_mib="${GRID_BUDGET_MIB:-200}"
unit_mib=25  # a unit's diff, rounded up (20-28 MiB in the 1.0 grid)
for unit in "$@"; do
    seed="${unit%%:*}"
    config="${unit#*:}"
    if [ -n "${GRID_BUDGET_BASE:-}" ] && ! "$python" "$main_checkout/scripts/maintainer/submission_size.py" \
            --repo "$main_checkout" --base "$GRID_BUDGET_BASE" main grid --largest 0 \
            --budget-mib "$((budget_mib - unit_mib))"; then
        echo "== $(stamp) stopping before $config/seed$seed: one more unit would pass ${budget_mib} MiB since $GRID_BUDGET_BASE"
        exit 3
    fi
    echo "== $(stamp) unit $config/seed$seed: zoo, filters"
    # two checkpoints at a time, one thread each (BENCHMARKS.md, "Model zoo training")
    "$python" -m gecobench reference --stage zoo --seeds "$seed" --configs "$config" --threads 1 --zoo-workers 2 \
        --quiet
    "$python" -m gecobench reference --stage filters --quiet
    commit_stage zoo reference/staging/predictions reference/filters reference/zoo_summary.json reference/timings.json
    echo "== $(stamp) unit $config/seed$seed: evaluate"
    OMP_NUM_THREADS=1 "$python" -m accelerate.commands.launch --multi_gpu --num_processes 2 -m gecobench reference \
        --stage evaluate --seeds "$seed" --configs "$config" --threads 1 --quiet &
    evaluation=$!
    while kill -0 "$evaluation" 2>/dev/null; do
        lower_autogroups "$evaluation"
        sleep 5
    done
    wait "$evaluation"
    commit_stage evaluate reference/staging reference/zero_shot_attributions reference/timings.json \
        reference/zoo_summary.json
    echo "== $(stamp) unit $config/seed$seed: derive"
    "$python" -m gecobench reference --stage derive --quiet
    commit_stage derive reference/staging reference/filters reference/timings.json reference/zoo_summary.json
    echo "== $(stamp) unit $config/seed$seed: committed"
done
echo "== $(stamp) all units done"
