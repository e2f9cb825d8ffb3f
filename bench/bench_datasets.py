#!/usr/bin/env python
"""Time the dataset builders: cold preparation (fresh cache) and warm loads of every GECO split and Spanish config.

Target (2-core CPU): all 8 GECO splits prepared from the local copy in under 15 s cold, under 3 s warm.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import datasets

from geco_dataset import GECO_CONFIGS, GECO_SPLITS, SPANISH_CONFIGS, load_geco
from geco_dataset.spanish import _load_spanish


def _time_all(cache_dir: str) -> tuple[float, float]:
    start = time.perf_counter()
    for config in GECO_CONFIGS:
        for split in GECO_SPLITS:
            load_geco(config, split, cache_dir=cache_dir)
    geco_s = time.perf_counter() - start
    start = time.perf_counter()
    for config in SPANISH_CONFIGS:
        _load_spanish(config, None, True, cache_dir)
    return geco_s, time.perf_counter() - start


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    datasets.disable_progress_bars()
    with tempfile.TemporaryDirectory() as cache_dir:
        cold = _time_all(cache_dir)
        warm = _time_all(cache_dir)
    print(f"GECO, 8 splits: cold {cold[0]:.2f} s, warm {warm[0]:.2f} s")
    print(f"Spanish, {len(SPANISH_CONFIGS)} configs: cold {cold[1]:.2f} s, warm {warm[1]:.2f} s")


if __name__ == "__main__":
    main()
