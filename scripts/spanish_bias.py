#!/usr/bin/env python
"""Shim for old commands: `gecobench spanish score` (logic: gecobench.cli.spanish; needs the package installed, `make setup`)."""
from gecobench.cli.spanish import build_parser, main  # noqa: F401

if __name__ == "__main__":
    raise SystemExit(main())
