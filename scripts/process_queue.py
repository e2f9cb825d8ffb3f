#!/usr/bin/env python
"""Shim for old commands: `gecobench queue` (logic: submissions.cli.queue; needs the package installed, `make setup`)."""
from submissions.cli.queue import build_parser, main  # noqa: F401

if __name__ == "__main__":
    raise SystemExit(main())
