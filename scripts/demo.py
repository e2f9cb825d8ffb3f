#!/usr/bin/env python
"""Shim for old commands: `gecobench demo` (logic: gecobench.cli.demo; needs the package installed, `make setup`)."""
from gecobench.cli.demo import build_parser, main  # noqa: F401

if __name__ == "__main__":
    raise SystemExit(main())
