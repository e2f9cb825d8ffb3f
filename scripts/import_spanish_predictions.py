#!/usr/bin/env python
"""Shim for old commands: `gecobench spanish recorded` (logic: gecobench.cli.spanish_recorded; needs the package installed, `make setup`)."""
from gecobench.cli.spanish_recorded import build_parser, main  # noqa: F401

if __name__ == "__main__":
    raise SystemExit(main())
