"""Small corpora for ingest tests: Markdown with sections and links, plain text, and a
corpus.jsonl of real 2WikiMultiHopQA passages (Apache-2.0), in a version A and an edited A′."""

from __future__ import annotations

import json
from pathlib import Path

PASSAGES = [
    {
        "id": "p4",
        "title": "Lothair II",
        "text": "Lothair II (835 – 8 August 869) was the king of Lotharingia from 855 until his death. He was the second son of Emperor Lothair I and Ermengarde of Tours. He was married to Teutberga (died 875), daughter of Boso the Elder.",
    },
    {
        "id": "p5",
        "title": "Ermengarde of Tours",
        "text": "Ermengarde of Tours (d. 20 March 851) was the daughter of Hugh of Tours, a member of the Etichonen family. In October 821 in Thionville, she married the Carolingian Emperor Lothair I of the Franks.",
    },
    {
        "id": "p0",
        "title": "Teutberga",
        "text": "Teutberga (died 11 November 875) was a queen of Lotharingia by marriage to Lothair II. She was a daughter of Bosonid Boso the Elder and sister of Hucbert, the lay-abbot of St. Maurice's Abbey.",
    },
    {
        "id": "p17",
        "title": "Aas Ka Panchhi",
        "text": "Aas Ka Panchhi is a 1961 Bollywood film directed by J. Om Prakash. The film stars Rajendra Kumar and Vyjayanthimala.",
    },
    {
        "id": "p19",
        "title": "Phoolwari",
        "text": "Phoolwari is a 1946 Indian Hindi-language film directed by Chaturbhuj Doshi. It starred Motilal and Khursheed.",
    },
    {
        "id": "p22",
        "title": "Changed It",
        "text": "Changed It is a song by Trinidadian rapper Nicki Minaj and American rapper Lil Wayne, released in 2017.",
    },
]

GUIDE = {
    "guide/install.md": "# Installing\n\nThe tool needs Python 3.11. See [usage](usage.md) afterwards.\n\n## Linux\n\nRun make install on Debian. It builds a virtual environment.\n\n## Troubleshooting\n\nIf the build fails, check the compiler. Reinstall the wheel cache.\n",
    "guide/usage.md": "# Usage\n\nAsk questions about Lothair II and Teutberga. The graph links passages.\n\n## Modes\n\nTIGRAG expands tokens with PageRank. SpectRAG selects context under a budget.\n",
    "notes.txt": "Field notes. Ermengarde of Tours married Lothair I in Thionville in 821.\n",
}


def write_corpus(root: Path, version: str) -> Path:
    """Version "A" or "A2" (A′: one file edited, one deleted, one added; in the jsonl one
    passage edited, one removed, one added)."""
    files = dict(GUIDE)
    passages = [dict(p) for p in PASSAGES]
    if version == "A2":
        files["guide/install.md"] = files["guide/install.md"].replace(
            "Run make install on Debian.", "Run make install on Debian or Ubuntu, then make test."
        )
        del files["notes.txt"]
        files["guide/faq.md"] = (
            "# FAQ\n\n## Why graphs?\n\nMulti-hop questions need links between passages such as Lothair II and Ermengarde of Tours.\n"
        )
        passages[3]["text"] += " It was a box office success."
        passages = [p for p in passages if p["id"] != "p19"]
        passages.append(
            {
                "id": "p24",
                "title": "Port of Spain",
                "text": "Port of Spain is the capital of Trinidad and Tobago. Nicki Minaj was born in Saint James, Port of Spain.",
            }
        )
    root.mkdir(parents=True, exist_ok=True)
    for old in root.rglob("*"):
        if old.is_file():
            old.unlink()
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "wiki").mkdir(exist_ok=True)
    (root / "wiki" / "corpus.jsonl").write_text(
        "".join(json.dumps(p) + "\n" for p in passages), encoding="utf-8"
    )
    return root
