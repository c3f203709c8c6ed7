"""Re-create `pages/` from the installed Debian package `git-doc`.

    apt-get install git-doc              # 1:2.39.5-0+deb12u3 on Debian 12
    .venv/bin/python bench/datasets/git-docs/build.py [--source DIR] [--force]

The subset is Git's manual pages and guides (`/usr/share/doc/git-doc/*.html`: porcelain and
plumbing commands, gitattributes, githooks, gitrevisions, the tutorials, the FAQ, the
glossary, ...) plus the user-facing how-tos under `howto/`, less the pages in `EXCLUDED`,
each with its reason. `technical/` (API notes, on-disk formats and protocol designs for
people working on Git's code) is left out as a whole.

Each page is copied byte for byte as shipped except that its `<svg>`, `<script>` and
`<style>` elements are cut out (every AsciiDoc page carries the same 17 kB of inline CSS and
table-of-contents JavaScript, which neorag's HTML loader drops anyway) and that an HTML
comment after `<head>` says so: the pages are GPL-2 and a modified copy has to say that it
was changed and when (see LICENSE.md). The build verifies that, for every page, the loader
extracts exactly the same title and sections from the copy as from the shipped file.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from debian_pages import installed_version, loaded  # noqa: E402

PACKAGE = "git-doc"
VERSION = "1:2.39.5-0+deb12u3"
SOURCE = Path("/usr/share/doc/git-doc")
SUBFOLDERS = ("howto",)  # besides the top level; technical/ is left out
_REMOVED = re.compile(r"<(svg|script|style)\b.*?</\1\s*>", re.DOTALL | re.IGNORECASE)
_HEAD = re.compile(r"<head>", re.IGNORECASE)
MODIFIED = "2026-12-04"  # when the rule below was written; the same bytes on every rebuild
NOTICE = (
    f"<!-- Modified for neorag's git-docs benchmark on {MODIFIED}: the style and script "
    f"elements of the page shipped in Debian's {PACKAGE} {VERSION} were removed "
    "(bench/datasets/git-docs/build.py). Licence: GPL-2, see LICENSE.md. -->"
)

_STUB = "a stub that only points to another page"
_SYNONYM = "a synonym whose page only points to the command it stands for"
_INDEX = "generated index"
_CONTRIB = "for contributors to Git itself, not for people using it"
_FORMAT = "on-disk format specification (gitformat-*), for Git implementers"
_PROTOCOL = "wire or helper protocol specification, for Git implementers"
_SERVER = "server-side half of fetch/push/archive, run by other commands, not by users"
_INTERNAL = "internal helper for Git's own scripts or daemons"
_DIFF_PLUMBING = (
    "diff plumbing whose page is mostly the diff options shared with git-diff, git-log and git-show"
)
_PROJECT = "about running the Git project (its releases, website, maintainer)"
EXCLUDED: dict[str, str] = {
    "index.html": "a symlink to git.html",
    "howto-index.html": _INDEX,
    "everyday.html": _STUB + " (giteveryday.html)",
    "git-remote-helpers.html": _STUB + " (gitremote-helpers.html)",
    "git-tools.html": _STUB + " (the retired list of third-party tools)",
    "git-init-db.html": _SYNONYM,
    "git-fsck-objects.html": _SYNONYM,
    "git-stage.html": _SYNONYM,
    "git-annotate.html": "git-blame's options again, for a command kept for compatibility",
    "git-pack-redundant.html": "deprecated, and slated for removal",
    "user-manual.html": (
        "a 270 kB book in one page (11 chapters and 2 appendices): its glossary chapter "
        "is gitglossary.html word for word and the other chapters retell the tutorials "
        "and the command pages"
    ),
    "git-bisect-lk2009.html": "a 2009 conference paper retelling git-bisect.html",
    "MyFirstContribution.html": _CONTRIB,
    "MyFirstObjectWalk.html": _CONTRIB,
    "ReviewingGuidelines.html": _CONTRIB,
    "SubmittingPatches.html": _CONTRIB,
    "ToolsForGit.html": _CONTRIB,
    "gitformat-bundle.html": _FORMAT,
    "gitformat-chunk.html": _FORMAT,
    "gitformat-commit-graph.html": _FORMAT,
    "gitformat-index.html": _FORMAT,
    "gitformat-pack.html": _FORMAT,
    "gitformat-signature.html": _FORMAT,
    "gitprotocol-capabilities.html": _PROTOCOL,
    "gitprotocol-common.html": _PROTOCOL,
    "gitprotocol-http.html": _PROTOCOL,
    "gitprotocol-pack.html": _PROTOCOL,
    "gitprotocol-v2.html": _PROTOCOL,
    "gitremote-helpers.html": _PROTOCOL,
    "git-remote-ext.html": _PROTOCOL + " (a transport helper)",
    "git-remote-fd.html": _PROTOCOL + " (a transport helper)",
    "git-fetch-pack.html": _SERVER,
    "git-send-pack.html": _SERVER,
    "git-upload-pack.html": _SERVER,
    "git-receive-pack.html": _SERVER,
    "git-upload-archive.html": _SERVER,
    "git-http-fetch.html": _SERVER,
    "git-http-push.html": _SERVER,
    "git-sh-i18n.html": _INTERNAL,
    "git-sh-i18n--envsubst.html": _INTERNAL,
    "git-sh-setup.html": _INTERNAL,
    "git-mergetool--lib.html": _INTERNAL,
    "git-web--browse.html": _INTERNAL,
    "git-credential-cache--daemon.html": _INTERNAL,
    "git-merge-one-file.html": _INTERNAL,
    "git-merge-index.html": _INTERNAL,
    "git-diff-files.html": _DIFF_PLUMBING,
    "git-diff-index.html": _DIFF_PLUMBING,
    "git-diff-tree.html": _DIFF_PLUMBING,
    "howto/coordinate-embargoed-releases.html": _PROJECT,
    "howto/maintain-git.html": _PROJECT,
    "howto/new-command.html": _PROJECT + " (adding a subcommand to git.git)",
    "howto/rebuild-from-update-hook.html": _PROJECT,
}


def shipped_pages(source: Path) -> list[str]:
    """Every HTML page at the top level and in `SUBFOLDERS`, as paths relative to
    `source`."""
    found = [p.name for p in source.glob("*.html")]
    for folder in SUBFOLDERS:
        found += [f"{folder}/{p.name}" for p in (source / folder).glob("*.html")]
    return sorted(found)


def selected_pages(source: Path) -> list[str]:
    return [p for p in shipped_pages(source) if p not in EXCLUDED]


def stripped(html: str) -> str:
    """The page without the elements neorag's loader drops, cut out of the source text so
    everything else stays byte for byte as shipped (`build` checks the loader's view), and
    with the modification notice after its `<head>` tag."""
    html, heads = _HEAD.subn("<head>\n" + NOTICE, _REMOVED.sub("", html), count=1)
    if not heads:
        raise ValueError("no <head> tag to put the modification notice after")
    return html


def build(source: Path, out: Path) -> int:
    pages = selected_pages(source)
    if not pages:
        raise SystemExit(f"no HTML pages under {source}: is {PACKAGE} installed?")
    missing = sorted(set(EXCLUDED) - set(shipped_pages(source)))
    if missing:
        print(f"note: excluded pages not in this version: {', '.join(missing)}")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for page in pages:
        shipped_file, target = source / page, out / page
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            copy_text = stripped(shipped_file.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise SystemExit(f"{page}: {exc}") from None
        target.write_text(copy_text, encoding="utf-8")
        shipped, copy = loaded(shipped_file), loaded(target)
        if (shipped.title, shipped.sections) != (copy.title, copy.sections):
            raise SystemExit(f"{page}: stripping changed the text the loader extracts")
    return len(pages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=SOURCE)
    parser.add_argument("--out", type=Path, default=HERE / "pages")
    parser.add_argument(
        "--force", action="store_true", help=f"build from a version other than {VERSION}"
    )
    args = parser.parse_args()
    version = installed_version(PACKAGE)
    if version != VERSION and not args.force:
        raise SystemExit(
            f"{PACKAGE} {version or 'is not installed'}; this set was built from {VERSION} "
            "(apt-get install git-doc, or --force to build from another version)"
        )
    count = build(args.source, args.out)
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    print(f"{count} pages, {size / 1e6:.1f} MB -> {args.out}")


if __name__ == "__main__":
    main()
