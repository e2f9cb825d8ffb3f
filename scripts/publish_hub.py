#!/usr/bin/env python
"""Shim for old commands: `gecobench publish` (logic: gecobench.cli.publish; needs the package installed, `make setup`)."""
from gecobench.cli.publish import build_parser, main  # noqa: F401

if __name__ == "__main__":
    raise SystemExit(main())
