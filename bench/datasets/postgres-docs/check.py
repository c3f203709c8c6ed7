"""Validate the postgres-docs set (bench/datasets/check_folder.py says what is checked): exit 0
and print counts when it is sound, else list every problem and exit 1.

    .venv/bin/python bench/datasets/postgres-docs/check.py
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from check_folder import main  # noqa: E402

if __name__ == "__main__":
    main(HERE)
