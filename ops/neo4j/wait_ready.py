"""Wait until a Neo4j server answers `RETURN gds.version()` over Bolt (used by `make test`).

Usage: wait_ready.py BOLT_URI PASSWORD_FILE [TIMEOUT_SECONDS [PID_FILE]]. Exits 0 when GDS
answers, 1 with a one-line reason otherwise; with PID_FILE, as soon as the server process
has exited (a taken port, a bad setting) rather than at the timeout. The password is read
from a file so it never shows up in a process listing or a log.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from neo4j import GraphDatabase
from neo4j.exceptions import AuthError, ClientError, ServiceUnavailable


def main() -> int:
    uri, password_file = sys.argv[1], Path(sys.argv[2])
    timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 180.0
    pid_file = Path(sys.argv[4]) if len(sys.argv) > 4 else None
    if not password_file.is_file():
        print(f"neo4j at {uri}: no password file {password_file}", file=sys.stderr)
        return 1
    password = password_file.read_text().strip()
    deadline = time.monotonic() + timeout
    last = "no answer yet"
    while time.monotonic() < deadline:
        if pid_file is not None and not _alive(pid_file):
            print(f"neo4j for {uri} exited while starting ({last})", file=sys.stderr)
            return 1
        try:
            with (
                GraphDatabase.driver(uri, auth=("neo4j", password)) as driver,
                driver.session() as session,
            ):
                # An auto-commit query: no driver retries (and no retry log lines) while
                # the server is still starting; this loop is the retry.
                version = session.run("RETURN gds.version() AS v").single()["v"]
                print(f"neo4j ready: GDS {version} at {uri}")
                return 0
        except AuthError:
            print(f"neo4j at {uri} refused the password in {password_file}", file=sys.stderr)
            return 1
        except ClientError as exc:
            if "gds.version" in str(exc):
                print(f"neo4j at {uri} has no GDS plugin loaded", file=sys.stderr)
                return 1
            last = exc.__class__.__name__
        except (ServiceUnavailable, OSError) as exc:
            last = exc.__class__.__name__
        time.sleep(1.0)
    print(f"neo4j at {uri} not ready after {timeout:.0f}s ({last})", file=sys.stderr)
    return 1


def _alive(pid_file: Path) -> bool:
    try:
        os.kill(int(pid_file.read_text().strip()), 0)
    except (OSError, ValueError):
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
