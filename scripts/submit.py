#!/usr/bin/env python
"""Shim for old commands: `gecobench submit` (logic: submissions.cli.submit; needs the package installed, `make setup`)."""
from submissions.cli.submit import build_parser, main  # noqa: F401

if __name__ == "__main__":
    raise SystemExit(main())
