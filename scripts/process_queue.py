#!/usr/bin/env python
"""Shim for old commands: `gecobench queue` (logic: gecobench.cli.queue; needs the package installed, `make setup`)."""
from gecobench.cli.queue import build_parser, main  # noqa: F401

if __name__ == "__main__":
    raise SystemExit(main())
