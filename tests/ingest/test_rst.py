"""reStructuredText through docutils: sections from the section tree, markup removed, links
kept where their text is, Sphinx roles and directives read as people read them, and
nothing outside the document pulled in."""

from __future__ import annotations

from pathlib import Path

from ingest.loaders import LoadedDocument, SkippedFile, scan
from ingest.loaders.rst import parse_rst, visible_text

GUIDE = """\
.. _intro:

=============
Kelp overview
=============

Kelp syncs *notes* between machines. See `the website <https://kelp.example/>`_ and
:class:`~kelp.sync.Syncer`, or :ref:`Installing Kelp <install>`.

.. note::

   Kelp needs **Python 3.11**.

Installing
==========

Run this::

    pip install kelp

.. versionadded:: 0.4
   The ``--dry-run`` flag.

.. toctree::
   :maxdepth: 2

   install

.. autoclass:: kelp.Syncer
   :members:

Configuration
-------------

- ``cache_max_mb`` defaults to 512.
- More at https://docs.kelp.example today.

+------+-------+
| key  | value |
+======+=======+
| mode | fast  |
+------+-------+

.. include:: /etc/hostname

.. raw:: html

   <script>alert("raw")</script>

.. |sub| replace:: substituted words

Using |sub| here.

.. a comment that is not text
"""


def sections(text: str) -> dict[tuple[str, ...], str]:
    _, found = parse_rst(text, "fallback")
    return {s.path: s.text for s in found}


def test_sections_follow_the_section_tree() -> None:
    title, found = parse_rst(GUIDE, "fallback")
    assert title == "Kelp overview"
    assert [s.path for s in found] == [
        ("Kelp overview",),
        ("Kelp overview", "Installing"),
        ("Kelp overview", "Installing", "Configuration"),
    ]


def test_markup_is_removed_and_roles_show_their_text() -> None:
    intro, installing, config = sections(GUIDE).values()
    assert intro == (
        "Kelp syncs notes between machines. See the website and Syncer, or Installing Kelp."
        "\n\nKelp needs Python 3.11."
    )
    assert "pip install kelp" in installing  # literal blocks verbatim
    assert "Added in version 0.4: The --dry-run flag." in installing
    assert "maxdepth" not in installing and "install\n" not in installing  # toctree
    assert "members" not in installing and "kelp.Syncer" not in installing  # autodoc
    assert "cache_max_mb defaults to 512." in config
    assert "key | value" in config and "mode | fast" in config  # a row per line
    assert "Using substituted words here." in config
    assert "comment" not in config and "|sub|" not in config


def test_nothing_outside_the_document_is_read_or_kept() -> None:
    everything = "\n".join(sections(GUIDE).values())
    hostname = Path("/etc/hostname")
    if hostname.is_file() and hostname.read_text().strip():
        assert hostname.read_text().strip() not in everything
    assert "script" not in everything and "alert" not in everything


def test_links_are_kept_where_their_text_is() -> None:
    _, found = parse_rst(GUIDE, "fallback")
    intro, _, config = found
    assert intro.links == ("https://kelp.example/",)
    assert [(intro.text[a:b], t) for a, b, t in intro.link_spans] == [
        ("the website", "https://kelp.example/")
    ]
    assert [(config.text[a:b], t) for a, b, t in config.link_spans] == [
        ("https://docs.kelp.example", "https://docs.kelp.example")
    ]


def test_no_sections_and_malformed_markup_still_give_text() -> None:
    title, found = parse_rst("Just a paragraph with a `broken link <.\n\n.. unknown::\n", "notes")
    assert title == "notes"
    assert [s.path for s in found] == [()]
    assert "Just a paragraph with a" in found[0].text


def test_visible_text_of_cross_references() -> None:
    assert visible_text("Label <target>") == "Label"
    assert visible_text("~sklearn.linear_model.Ridge") == "Ridge"
    assert visible_text("sklearn.linear_model.Ridge") == "sklearn.linear_model.Ridge"
    assert visible_text("!os.path") == "os.path"


def test_a_rst_file_is_a_document(tmp_path: Path) -> None:
    (tmp_path / "guide.rst").write_text(GUIDE, encoding="utf-8")
    (tmp_path / "notes.rest").write_text("Notes\n=====\n\nSome notes.\n", encoding="utf-8")
    items = list(scan(tmp_path, 1 << 20))
    assert not [i for i in items if isinstance(i, SkippedFile)]
    docs = [i for i in items if isinstance(i, LoadedDocument)]
    assert [(d.id, d.title) for d in docs] == [
        ("guide.rst", "Kelp overview"),
        ("notes.rest", "Notes"),
    ]
