"""python -m bench SUITE [options]: one benchmark suite (`make bench SUITE=… ARGS=…`).

python -m bench                  # lists the suites
python -m bench SUITE --help     # a suite's options
"""

from __future__ import annotations

import importlib
import sys

from bench.suites import SUITES


def usage() -> str:
    width = max(map(len, SUITES))
    rows = [f"  {name:<{width}}  {summary}" for name, (_, summary) in SUITES.items()]
    return "usage: python -m bench SUITE [options]\n\nsuites:\n" + "\n".join(rows)


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in SUITES:
        print(f"bench: no suite {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(SUITES[name][0])
    saved, sys.argv = sys.argv, [f"python -m bench {name}", *rest]  # suites read sys.argv
    try:
        return int(module.main() or 0)
    finally:
        sys.argv = saved


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
