"""README, Collections and document identity: "A document's id is its collection plus its
source: `default:/srv/docs/guide/install.md` ... the same file has the same id whichever
folder above it you ingest."

One file is ingested through its parent folder and through its grandparent folder, in
both orders (and once through a relative path), into one embedded collection of a tmp data
dir, the way `neorag ingest PATH` does (`ingest_once`). The stored id must be the same each
time and the file must be one document, not two.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.ingest_service import ingest_once
from app.services import open_store
from app.settings import Settings
from ingest.identity import document_id
from tests.conftest import fresh_collection

pytestmark = pytest.mark.slow

INSTALL = "# Install\n\nRun the Silverrun installer, then start the Kell service on port 7000.\n"
OTHER = "# Release notes\n\nVersion 2 adds the Amber Sea importer.\n"


@pytest.fixture()
def settings(tmp_path: Path) -> Settings:
    return Settings(backend="embedded", data_dir=tmp_path / "data").for_collection(
        fresh_collection()
    )


@pytest.fixture()
def library(tmp_path: Path) -> Path:
    """library/guide/install.md, and library/notes.md beside the guide folder (so an
    ingest of the grandparent visibly does more than one of the parent)."""
    root = tmp_path / "library"
    (root / "guide").mkdir(parents=True)
    (root / "guide" / "install.md").write_text(INSTALL, encoding="utf-8")
    (root / "notes.md").write_text(OTHER, encoding="utf-8")
    return root


def stored_ids(settings: Settings) -> list[str]:
    with open_store(settings) as store:
        return sorted(store.documents())


def ids_of(ids: list[str], file: Path) -> list[str]:
    """The stored ids whose source is `file` (ids are `<collection>:<absolute path>`)."""
    return [d for d in ids if Path(d.partition(":")[2]).name == file.name]


@pytest.mark.parametrize("order", ["parent-then-grandparent", "grandparent-then-parent"])
def test_a_file_has_one_id_whichever_folder_above_it_is_ingested(
    settings: Settings, library: Path, order: str
) -> None:
    install = library / "guide" / "install.md"
    expected = document_id(settings.collection, str(install.resolve()))
    parent, grandparent = library / "guide", library
    first, second = (
        (parent, grandparent) if order == "parent-then-grandparent" else (grandparent, parent)
    )

    report = ingest_once(settings, first)
    assert report.ok, report
    after_first = stored_ids(settings)
    assert ids_of(after_first, install) == [expected]

    report = ingest_once(settings, second)
    assert report.ok, report
    after_second = stored_ids(settings)
    assert ids_of(after_second, install) == [expected], after_second
    # the second ingest found the file under its new root and left it as it was
    assert expected not in report.new and expected not in report.removed, report
    assert report.changed == []
    notes = document_id(settings.collection, str((library / "notes.md").resolve()))
    assert after_second == sorted([expected, notes])


def test_a_relative_path_names_the_same_document(
    settings: Settings, library: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`neorag ingest guide` from inside library/, then `neorag ingest /abs/library`."""
    install = library / "guide" / "install.md"
    expected = document_id(settings.collection, str(install.resolve()))
    data_dir = settings.data_dir.resolve()
    settings = settings.model_copy(update={"data_dir": data_dir})
    monkeypatch.chdir(library)

    ingest_once(settings, Path("guide"))
    assert stored_ids(settings) == [expected]
    report = ingest_once(settings, library.resolve())
    assert expected not in report.new and expected not in report.removed, report
    assert ids_of(stored_ids(settings), install) == [expected]


def test_a_file_in_a_linked_folder_has_one_id_whichever_folder_above_it_is_ingested(
    settings: Settings, tmp_path: Path
) -> None:
    """library/guide is a symbolic link to shelf/guide (folders are walked through links).
    Ingesting library/ and then library/guide/ reaches the same file through two folders
    above it: one document, named by where the file lies. A file deleted from the linked
    folder is removed by re-ingesting library/ (the linked folder is in that ingest's scope),
    and so is everything it held once the link is removed."""
    real = tmp_path / "shelf" / "guide"
    real.mkdir(parents=True)
    (real / "install.md").write_text(INSTALL, encoding="utf-8")
    library = tmp_path / "library"
    library.mkdir()
    (library / "guide").symlink_to(real, target_is_directory=True)

    ingest_once(settings, library)
    first = stored_ids(settings)
    ingest_once(settings, library / "guide")
    second = stored_ids(settings)
    assert len(first) == 1
    assert second == first, f"after library/: {first}; after library/guide/: {second}"
    assert first[0].endswith(str(real.resolve() / "install.md"))

    (real / "setup.md").write_text(INSTALL.replace("install", "set up"), encoding="utf-8")
    ingest_once(settings, library)
    assert len(stored_ids(settings)) == 2
    (real / "setup.md").unlink()
    report = ingest_once(settings, library)
    assert len(report.removed) == 1 and stored_ids(settings) == first

    (library / "guide").unlink()  # the link goes: what library/ held through it goes too
    (library / "notes.md").write_text(OTHER, encoding="utf-8")
    report = ingest_once(settings, library)
    assert report.removed == first and len(stored_ids(settings)) == 1
    assert (real / "install.md").exists()  # only documents go, never files


def test_a_file_linked_twice_inside_the_folder_is_one_document(
    settings: Settings, library: Path
) -> None:
    """Two links to one file beside it: one document, and nothing reported as skipped (a
    skip would make every scheduled run exit with status 1)."""
    (library / "latest.md").symlink_to(library / "guide" / "install.md")
    (library / "guide" / "current.md").symlink_to(library / "guide" / "install.md")
    report = ingest_once(settings, library)
    assert not report.skipped
    install = library.resolve() / "guide" / "install.md"
    assert ids_of(stored_ids(settings), install) == [document_id(settings.collection, str(install))]
    assert len(stored_ids(settings)) == 2  # install.md and notes.md
