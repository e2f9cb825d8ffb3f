"""CPU time of a cold read of a results store of N synthetic records (ResultsLoader.load), for one source tree.

Measures process time, not wall time, so that a shared, loaded machine still gives comparable figures between
two trees (e.g. before and after a change to the store's validation).

Example: python bench/bench_store_read.py --n 2000 --tree .
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000, help="number of explainer_score records (default 10000)")
    parser.add_argument("--tree", default=str(Path(__file__).resolve().parent.parent),
                        help="repository root whose gecobench/leaderboard_space to time (default: this one)")
    parser.add_argument("--repeats", type=int, default=3, help="cold loads to time (default 3)")
    args = parser.parse_args(argv)
    tree = Path(args.tree).resolve()
    sys.path.insert(0, str(tree))
    from leaderboard_space.data import ResultsLoader
    try:  # a tree from before 1.0 carries the synthetic-record generator inside its Space package
        from leaderboard_space.sample_records import sample_records
    except ImportError:  # since then a maintainers' helper (scripts/maintainer/, not shipped): the tree's own
        helpers = tree / "scripts" / "maintainer"
        if not (helpers / "_sample_records.py").is_file():
            helpers = Path(__file__).resolve().parent.parent / "scripts" / "maintainer"
        sys.path.append(str(helpers))
        from _sample_records import sample_records

    root = Path(tempfile.mkdtemp())
    for record in sample_records(args.n, validate=False, with_bias=False):
        path = root / record["record_type"] / f"{record['record_id']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=2, sort_keys=True))
    seconds = []
    for _ in range(args.repeats):
        start = time.process_time()
        loaded = ResultsLoader(str(root)).load()
        seconds.append(time.process_time() - start)
    print(f"{args.tree}: {len(loaded.documents)} records read, {len(loaded.warnings)} skipped; "
          f"cold load CPU seconds: {', '.join(f'{s:.2f}' for s in seconds)}")


if __name__ == "__main__":
    main()
