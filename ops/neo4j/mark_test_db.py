"""Mark the fresh database `make test` started as the test harness's own, so the test
fixtures may write to it (they refuse a database holding data they did not create).

    mark_test_db.py BOLT_URI PASSWORD_FILE
"""

from __future__ import annotations

import sys
from pathlib import Path

from neo4j import GraphDatabase

import cypher


def main(uri: str, password_file: str) -> int:
    password = Path(password_file).read_text().strip()
    with GraphDatabase.driver(uri, auth=("neo4j", password)) as driver:
        driver.execute_query(cypher.load("test_marker_create"))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
