"""What a question asks for, read from its wording and its spaCy parse.

The reader needs four things from a question: the kind of answer (a span, yes/no, or one of
the options the question names), the entity types a span answer is likely to have (a
"who" asks for a person, a "which band" for an organisation), the noun the wh-word points
at ("which *band*"), because evidence tends to name the answer right next to that noun
("the rock band Rush"), and the question's content words, which the answer itself seldom
repeats. Everything here is wording and grammar, nothing learnt from a dataset.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from app.reader.code import has_keywords, quotes_code, technical_share
from app.reader.lexicon import (
    AUXILIARIES,
    CLASS_LABELS,
    EARLIER_WORDS,
    HEAD_LABELS,
    HOW_TO_SUBJECTS,
    LARGER_WORDS,
    LATER_WORDS,
    LIFESPAN_WORDS,
    PERSON_LABELS,
    QUANTITY_HEADS,
    SHORTER_WORDS,
    SMALLER_WORDS,
    STOP,
    TALLER_WORDS,
    TECH_HEADS,
    TECHNICAL_LABELS,
    WH_LABELS,
)
from app.reader.life import Event, asked_event

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token


AnswerKind = Literal["span", "yesno", "choice"]
Order = Literal["earlier", "later", "larger", "smaller"]
Measure = Literal["date", "number", "lifespan", "height"]
Slot = tuple[str, frozenset[str]]  # a role ("subj", "obj") and its verb's forms

# a lower-case article before an option is the question's ("the French Bulldog"); a
# capitalised one is the title's ("The Lone Prairie", "A Better Tomorrow")
_LEADING_ARTICLE = re.compile(r"^(the|a|an)\s+")
_LINKERS = frozenset({"of", "the", "de", "v.", "and", "&"})
_WH_WORDS = frozenset({"which", "what", "who", "whose", "when", "where", "how", "why"})
# "How many members …" asks for a count, whatever the members are.
COUNTING = frozenset({"how many", "how much"})
_ASKS_WHICH = frozenset({"what", "which"})


@dataclass(slots=True)
class QuestionAnalysis:
    text: str
    kind: AnswerKind
    wh: str  # "who", "when", "how many", "which", … ("" when none is found)
    head: str  # lemma of the noun the wh-word asks about ("band"), "" when none
    labels: dict[str, float]  # expected entity label -> prior weight
    content: frozenset[str]  # lowercased content words (and their lemmas)
    focus: frozenset[str] = frozenset()  # content words around the wh-word
    describe: frozenset[str] = frozenset()  # the asked-about noun phrase: "Canadian rock band"
    options: list[str] = field(default_factory=list)  # choice questions: "A or B"
    order: Order | None = None  # choice questions that compare by a date or a number
    measure: Measure | None = None  # what `order` compares
    slot: Slot | None = None  # the wh-word's role and verb: ("subj", {"make", "made"})
    event: Event | None = None  # "When did X die?": the biography event asked about
    technical: bool = False  # asks for something to type: a setting, a function, a flag
    plural: bool = False  # the asked-about noun is plural ("which two teams"): maybe a list
    subject: frozenset[str] = frozenset()  # what the answer is said of: "[Danish plant ecologist]"
    definition: bool = False  # "What is the graph model?": the answer is a description

    @property
    def quantity(self) -> bool:
        """Whether the answer must name a number: "how many …", "what page size …"."""
        if self.kind != "span":
            return False
        return self.wh in COUNTING or (self.head in QUANTITY_HEADS and self.wh in _ASKS_WHICH)

    @property
    def top_label(self) -> str:
        """The label the question expects most ("" when it expects none)."""
        return max(self.labels, key=self.labels.__getitem__) if self.labels else ""


def analyse(doc: Doc) -> QuestionAnalysis:
    """Read `doc`, the spaCy parse of one question."""
    text = doc.text.strip()
    lowered = text.lower()
    content = frozenset(
        w
        for t in doc
        if not t.is_punct and not t.is_space
        for w in {t.lower_, t.lemma_.lower()}
        if w not in STOP and len(w) > 1
    )
    at = _wh_position(doc)  # the question's own wh-word, read once
    wh, head = _wh_and_head(doc, at)
    labels = dict(WH_LABELS.get(wh, {}))
    if head.startswith("type:"):
        head = head.removeprefix("type:")
        labels = dict(CLASS_LABELS)
    elif wh not in COUNTING and (head in HEAD_LABELS or person_noun(head)):
        labels = dict(HEAD_LABELS.get(head, PERSON_LABELS))
    technical = _technical(doc, wh, head)
    if technical:
        for label, prior in TECHNICAL_LABELS.items():
            labels[label] = max(labels.get(label, 0.0), prior)
    options = _options(text)
    starts_aux = bool(doc) and doc[0].lower_ in AUXILIARIES
    kind: AnswerKind = "span"
    if len(options) >= 2 and (wh or starts_aux):
        kind = "choice"
    elif starts_aux and not wh:
        kind = "yesno"
    # the options' own words do not order them ("… born later, The First Day Of Freedom or …")
    wording = lowered
    for option in options:
        wording = wording.replace(option.lower(), " ")
    order, measure = _order(wording) if kind == "choice" else (None, None)
    focus = _focus(doc, at)
    return QuestionAnalysis(
        text=text,
        kind=kind,
        wh=wh,
        head=head,
        labels=labels,
        content=content,
        focus=focus,
        describe=_description(doc, head, at),
        options=options if kind == "choice" else [],
        order=order,
        measure=measure,
        slot=_slot(doc, at),
        event=asked_event(content, focus),
        technical=technical,
        plural=_plural(doc, head, at) and wh not in COUNTING,
        subject=_subject(doc, at),
        definition=_asks_definition(doc),
    )


# Evidence this share of whose sentences quote code is documentation. Per question, the
# shared Wikipedia sets' evidence has at most 8% (2wiki-dev; 0 on the others) and
# sqlite-docs' a median of 23% (`technical_share`, default mode's context).
TECHNICAL_EVIDENCE = 0.15


def in_context(analysis: QuestionAnalysis, evidence: list[str]) -> QuestionAnalysis:
    """The analysis with what the evidence says about the corpus: over documentation, a
    question that names no type of answer ("what happens when …") or holds an upper-case
    word ("right after BEGIN": a keyword there, not an acronym) is technical too."""
    if analysis.technical or analysis.kind != "span":
        return analysis
    if analysis.labels and not has_keywords(analysis.text):
        return analysis
    if technical_share(evidence) < TECHNICAL_EVIDENCE:
        return analysis
    labels = dict(analysis.labels)
    for label, prior in TECHNICAL_LABELS.items():
        labels[label] = max(labels.get(label, 0.0), prior)
    return replace(analysis, labels=labels, technical=True)


_BARE_NOUN_PARTS = frozenset({"det", "compound", "amod", "nmod", "poss", "case", "punct"})


def _asks_definition(doc: Doc) -> bool:
    """ "What is X?" with X a bare noun phrase ("the graph model", "a knowledge graph"):
    the answer is what the evidence says X is, a description, not a span. A noun phrase
    with a complement ("the capital of France", "the nick name of this player") asks for
    one attribute of something, which a span names."""
    words = [t for t in doc if not t.is_punct and not t.is_space]
    if len(words) < 3 or words[0].lower_ != "what" or words[0].pos_ != "PRON":
        return False
    root = words[0].head
    if root.lemma_ != "be" or root.dep_ != "ROOT" or words[0].dep_ not in ("attr", "nsubj"):
        return False
    others = [c for c in root.children if c.i != words[0].i and not c.is_punct]
    if len(others) != 1 or others[0].dep_ not in ("nsubj", "attr"):
        return False
    noun = others[0]
    return all(t.dep_ in _BARE_NOUN_PARTS for t in noun.subtree if t.i != noun.i)


def _technical(doc: Doc, wh: str, head: str) -> bool:
    """Whether the answer is likely something to type (`code`): the question asks for a
    setting, function, flag … (`TECH_HEADS`), is a how-to ("how do I …", "what can we
    add …", "how to …"; not a title such as "How I Met Your Mother"), or itself quotes
    code, which says the corpus is technical."""
    if head in TECH_HEADS:
        return True
    words = [t.lower_ for t in doc]
    for i, w in enumerate(words[:-1]):
        if w == "how" and words[i + 1] == "to":
            return True
        if (
            w in ("how", "what")
            and words[i + 1] in AUXILIARIES
            and i + 2 < len(words)
            and words[i + 2] in HOW_TO_SUBJECTS
        ):
            return True
    return quotes_code(doc.text)


def _in_title(t: Token) -> bool:
    """A capitalised wh-word inside the question is a title's word ("the narrator of How
    I Met Your Mother", "the host of Who Wants to be a Millionaire"), not the question's."""
    before = [p for p in t.doc[: t.i] if not p.is_space]
    if not before or not t.is_title:
        return False
    return before[-1].text not in ".?!:;"


def _opens_adverbial_clause(t: Token) -> bool:
    """`t` is the first word of an adverbial clause and its conjunction ("[When] I
    mistype …, Git …"): a condition of the question, not what it asks."""
    return t.dep_ in ("advmod", "mark") and t.head.dep_ == "advcl" and t.i == t.head.left_edge.i


def _wh_position(doc: Doc) -> int:
    """Index of the question's own wh-word (-1 when there is none): the first one that
    does not open a relative clause ("a footballer [who] plays for a team in the community
    of [what]?"), else the last one; a wh-word opening an adverbial clause is not the
    question's ("[When] I mistype `git stauts`, Git only suggests … Can it …?"), nor is one
    in a title (`_in_title`)."""
    found = [
        t
        for t in doc
        if (t.lower_ in _WH_WORDS or t.lower_ == "whom")
        and not _opens_adverbial_clause(t)
        and not _in_title(t)
    ]
    if not found:
        return -1
    for t in found:
        if not any(a.dep_ in ("relcl", "acl") for a in [t, *t.ancestors]):
            return t.i
    return found[-1].i


_LIGHT_VERBS = frozenset({"be", "have", "do", "become"})


def argument_slot(token: Token) -> Slot | None:
    """The role a noun phrase's head plays for its verb (with the verb's lemma and word,
    since the tagger lemmatises "did … found" as "find"): ("subj", make) for "Ottilie
    Brand made …" and for "… was made by Ottilie Brand", ("obj", "make") for "… made the
    first ascent" and "the ascent was made …". Appositions and compounds take their
    noun's role ("the band Rush released …"). None for light verbs, which say too little."""
    for _ in range(2):
        if token.dep_ in ("appos", "compound") and token.head.pos_ in ("NOUN", "PROPN"):
            token = token.head
    dep, head = token.dep_, token.head
    if dep == "pobj" and head.dep_ == "agent":
        role, verb = "subj", head.head
    elif dep == "nsubj":
        role, verb = "subj", head
    elif dep in ("nsubjpass", "dobj"):
        role, verb = "obj", head
    else:
        return None
    lemma = verb.lemma_.lower()
    if verb.pos_ not in ("VERB", "AUX") or lemma in _LIGHT_VERBS:
        return None
    return role, frozenset({lemma, verb.lower_})


def _slot(doc: Doc, at: int) -> Slot | None:
    """The role the wh-phrase plays ("[Who] made the first ascent" → ("subj", make));
    "which band released …" asks through its noun."""
    if at < 0:
        return None
    token = doc[at]
    if token.dep_ in ("det", "poss") and token.head.pos_ in ("NOUN", "PROPN"):
        token = token.head
    return argument_slot(token)


def _focus(doc: Doc, at: int) -> frozenset[str]:
    """Content words next to the wh-word and the verb that governs it: "… the autonomous
    community of [what]", "In what year did he [die]". Evidence that answers the question
    tends to repeat them right around the answer."""
    if at < 0:
        return frozenset()
    window = [t for t in doc[max(at - FOCUS_WINDOW, 0) : at + FOCUS_WINDOW + 1] if t.i != at]
    verb = next((a for a in doc[at].ancestors if a.pos_ in ("VERB", "AUX")), None)
    tokens = [*window, *([verb] if verb is not None else [])]
    return frozenset(
        w
        for t in tokens
        if not t.is_punct
        for w in (t.lower_, t.lemma_.lower())
        if w not in STOP and len(w) > 1
    )


def _description(doc: Doc, head: str, at: int) -> frozenset[str]:
    """Words of the noun phrase the wh-word asks about ("which [Italian painter and
    architect]"): the head noun, its modifiers and conjuncts. Evidence describes the answer
    with them ("Giotto … was an Italian painter and architect")."""
    if not head:
        return frozenset()
    nouns = [t for t in doc if t.lemma_.lower() == head and t.i > at]
    if not nouns:
        return frozenset({head})
    noun = nouns[0]
    words = [noun, *noun.conjuncts]
    words += [c for w in list(words) for c in w.children if c.dep_ in _MODIFIERS]
    return frozenset(
        f for t in words if not t.is_punct for f in (t.lower_, t.lemma_.lower()) if f not in STOP
    )


def _subject(doc: Doc, at: int) -> frozenset[str]:
    """Words of the noun phrase the answer is said of, when the wh-word is not it: the
    common noun after the wh-phrase's auxiliary, with the words before it and without what
    follows ("In what year did [the Danish plant ecologist] who assisted a Danish chemist …
    die?", "What city was [the author] of … born in?"). Read from the word order, since the
    small parser often misreads such long questions."""
    if at < 0:
        return frozenset()
    aux = next((t for t in doc[at + 1 : at + 6] if t.pos_ == "AUX"), None)
    if aux is None:
        return frozenset()
    if aux.lemma_ == "be" and doc[at].lower_ in ("who", "what", "which") and doc[at].dep_ != "det":
        return frozenset()  # "Who is [the federal leader] of …": that describes the answer
    run = []
    for t in doc[aux.i + 1 :]:
        if t.pos_ == "DET" and not run:
            continue
        if t.pos_ not in ("ADJ", "NOUN", "PROPN", "NUM"):
            break
        run.append(t)
    if not run or run[-1].pos_ != "NOUN":
        return frozenset()
    return frozenset(
        f for t in run for f in (t.lower_, t.lemma_.lower()) if f not in STOP and len(f) > 1
    )


def _wh_and_head(doc: Doc, at: int) -> tuple[str, str]:
    """The wh-phrase ("how many", "which", "when", …) and the noun it asks about (`at`:
    the question's wh-word, `_wh_position`)."""
    tokens = list(doc)
    for i, t in enumerate(tokens):
        if i != at and not (t.lower_ == "how" and at < 0):
            continue
        low = t.lower_
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if low == "how" and nxt is not None:
            if nxt.lower_ in ("many", "much"):
                return f"how {nxt.lower_}", _noun_at(tokens, _noun_index(tokens, i + 2))
            if nxt.lower_ in ("long", "old", "tall", "high", "far", "big", "large"):
                return f"how {nxt.lower_}", ""
            return "how", ""
        if low in ("which", "what", "whose"):
            start = i + 1
            if start + 1 < len(tokens) and tokens[start].pos_ == "AUX":
                start += 1  # "what is the seat of …" asks about the noun after the copula
            head = _noun_at(tokens, _determined(t) or _noun_index(tokens, start))
            if low == "what" and not head:
                return "what", ""
            return "which" if low == "which" else low, head
        if low in ("who", "whom") and nxt is not None and nxt.lemma_ == "be":
            # "who is the employer of …" asks for what the noun after the copula names, when
            # that is no person ("who is the father of …" asks for a person either way)
            j = _noun_index(tokens, i + 2)
            while 0 < j < len(tokens) - 1 and tokens[j].dep_ == "compound":
                j += 1  # "the record [label] of"
            of = 0 < j < len(tokens) - 1 and tokens[j + 1].lower_ == "of"
            if of and not _names_a_person(noun := _noun_at(tokens, j)):
                return "who", noun
        if low in ("who", "whom", "when", "where", "why"):
            return ("who" if low == "whom" else low), ""
    return "", ""


DETERMINED_SPAN = 5  # tokens from "what" / "which" to the noun it determines


def _determined(wh: Token) -> int:
    """The common noun the wh-word determines, past modifiers the tagger does not call
    nouns ("what Kenya-based company", "what French award"); 0 when it determines none."""
    noun = wh.head
    if wh.dep_ == "det" and noun.pos_ == "NOUN" and 0 < noun.i - wh.i <= DETERMINED_SPAN:
        return noun.i
    return 0


def _names_a_person(noun: str) -> bool:
    """The noun names a person, or the lexicon does not know it."""
    labels = HEAD_LABELS.get(noun)
    return labels is None or max(labels, key=labels.__getitem__) == "PERSON"


def person_noun(noun: str) -> bool:
    """A noun for someone by what they do, by its suffix: "essayist", "pianist",
    "historian", "librarian" (the lexicon cannot list them all)."""
    return len(noun) > 5 and noun.endswith(("ist", "ian"))


def _plural(doc: Doc, head: str, at: int) -> bool:
    """The asked-about noun is said in the plural after the wh-word ("What were the
    nations …", "Which two teams …")."""
    if not head or at < 0:
        return False
    return any(t.lemma_.lower() == head and t.tag_ in ("NNS", "NNPS") for t in doc[at : at + 6])


FOCUS_WINDOW = 4
_MODIFIERS = frozenset({"amod", "compound", "nmod", "nummod"})
_CARRIERS = frozenset(
    {"type", "kind", "sort", "name", "form", "group", "genre", "class", "category", "breed"}
)


def _noun_index(tokens: list, start: int) -> int:
    """Index of the first noun among the next four tokens (-1 if a verb comes first). A
    word the lexicon knows as an answer noun counts even when the tagger calls it a verb
    ("in which play")."""
    for j in range(start, min(start + 4, len(tokens))):
        t = tokens[j]
        if t.pos_ in ("NOUN", "PROPN") or (j == start and t.lemma_.lower() in HEAD_LABELS):
            return j
        if t.pos_ in ("VERB", "AUX"):
            break
    return -1


def _noun_at(tokens: list, j: int) -> str:
    """The lemma of the noun phrase at `j`: its head for a compound ("fight [song]", "New
    York [county]"), the noun after a carrier ("what type of [film]", marked "type:film": a
    class is asked)."""
    if j < 0:
        return ""
    token = tokens[j]
    while (
        token.dep_ == "compound"
        and token.head.i > token.i
        and (token.head.pos_ == "NOUN" or token.pos_ == token.head.pos_ == "PROPN")
    ):
        token = token.head
    lemma = token.lemma_.lower()
    k = token.i - tokens[0].i
    if lemma in _CARRIERS and k + 2 < len(tokens) and tokens[k + 1].lower_ == "of":
        inner = _noun_at(tokens, _noun_index(tokens, k + 2))
        if not inner:
            return lemma
        return inner if lemma == "name" or inner.startswith("type:") else f"type:{inner}"
    return lemma


def _options(text: str) -> list[str]:
    """The alternatives of "…, A or B?" / "Is A or B public?", without a leading article.

    The right option runs from the last "or" to the end, or (when no comma sets the options
    apart) to the end of its capitalised run; the left option is the comma-separated piece
    before that "or", or the capitalised run ending there. Both must look like names
    (capitalised or a number), which keeps "the TV show or film" from counting.
    """
    body = text.strip().rstrip(" ?.")
    found = list(re.finditer(r"\bor\b", body, re.IGNORECASE))
    if not found:
        return []
    split = found[-1]
    left, right = body[: split.start()].rstrip(" ,"), body[split.end() :].strip()
    pieces = re.split(r"[,:;][\"']?\s+", left)
    if len(pieces) > 1:
        options = [pieces[-1], right]
    else:
        words = left.split()
        if words and words[0].lower() in AUXILIARIES | _WH_WORDS:
            words = words[1:]
        options = [_names_in(" ".join(words), last=True), _names_in(right, last=False)]
    options = [_LEADING_ARTICLE.sub("", o.strip(" \"'")).strip() for o in options]
    if not all(o and (o[0].isupper() or o[0].isdigit()) for o in options):
        return []
    return options


def _names_in(fragment: str, *, last: bool) -> str:
    """The run of capitalised words (inner linkers such as "of" allowed) at the end (`last`)
    or at the start of a fragment."""
    words = fragment.split()
    if last:
        words = list(reversed(words))
    run: list[str] = []
    for w in words:
        if w[:1].isupper() or w[:1].isdigit() or (run and w.lower() in _LINKERS):
            run.append(w)
        else:
            break
    while run and run[-1].lower() in _LINKERS:
        run.pop()
    if last:
        run.reverse()
    return " ".join(run).strip(",")


def _order(lowered: str) -> tuple[Order | None, Measure | None]:
    """How a choice question compares its options: "born first" is the earlier date, "lived
    longer" the larger lifespan, "more species" the larger number."""
    words = set(re.findall(r"[a-z']+", lowered))
    split = lowered.split()
    phrases = {
        " ".join(p) for n in (2, 3) for p in zip(*(split[i:] for i in range(n)), strict=False)
    }
    if words & LIFESPAN_WORDS and words & {"older", "oldest", "longer", "longest"}:
        return "larger", "lifespan"
    if phrases & LATER_WORDS:
        return "later", "date"
    if (words | phrases) & EARLIER_WORDS:
        return "earlier", "date"
    if words & LATER_WORDS:
        return "later", "date"
    if words & TALLER_WORDS:
        return "larger", "height"
    if words & SHORTER_WORDS:
        return "smaller", "height"
    if words & LARGER_WORDS:
        return "larger", "number"
    if words & SMALLER_WORDS:
        return "smaller", "number"
    return None, None
