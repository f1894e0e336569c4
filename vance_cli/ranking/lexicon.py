r"""Words of a task or a recipe as the lexical ranking compares them: stems, stop words, heads.

The offline selector has no model of meaning, so this module encodes the few
facts about English and German requests that let word matching tell intent
from topic. Each is a rule of the languages, not of any set of tasks.

Invariants:
- A word is a run of Unicode word characters (``\w+``), case-folded.
- **Same word**: two words are the same word when the Snowball stemmer of
  English, or the one of German, reduces them to the same stem (``word_keys``;
  accents folded after stemming): ``translate`` / ``translating``,
  ``übersetze`` / ``übersetzen`` / ``übersetzung``, ``englische`` /
  ``englisch``. That is inflection, no more: ``water`` is not ``waterfall``,
  ``compose`` is not ``composition``, ``personen`` is not ``personas``. A
  recipe that wants a derived word (``reuse`` beside ``reusable``) lists it.
  A task whose function words are clearly English (or German) is stemmed in
  that language only (``language``): the German stemmer would make the
  English ``short`` the same word as ``shorten``. Stemmers: PyStemmer, the C
  build of the Snowball algorithms (≈ 2 ms to import).
- **Content words** are the words left after dropping ``STOP_WORDS`` and
  numbers: function words, light verbs that go with any request ("give me",
  "make", "create", "write", "mach mir", "erstelle") and number words. After a
  light verb the object names the deliverable ("Write *an essay*").
- **Negation**: from a word of ``NEGATIONS`` to the next comma, sentence end,
  clause word or contrast word, the words say what is *not* wanted ("Don't
  change anything, just explain it"; a description's "not code or a finished
  essay"). They are no evidence, in a task or in a recipe's description.
- **Clauses**: a task splits at sentence punctuation (``. ! ? ; :`` before a
  space or the end, line breaks) and at the words of ``CLAUSE_WORDS``
  (``and``, ``then``, ``please``, ``und``, ``dann``, ``bitte`` …).
- **Head words** of a clause are where a request names what it wants: its
  first content word (the predicate of an English or German request or
  question: "*Translate* …", "Can you *explain* …", "*Who* wrote …",
  "*Übersetze* …", "*Wann* wurde …"); unless the task is clearly English, its
  last content word when it is not written as a noun (where German puts the
  verb of a modal request, "Kannst du … *zusammenfassen*?", but not "für die
  10. *Klasse*" — an English clause ends in a complement instead, "a picture
  of two people *debating*"); when the clause opens with a function word or
  light verb instead of a predicate, every word of its first run of adjacent
  content words (the object: "Write a *persuasive essay*", "Give me the
  *gist* of …", "Wie heißt die *Hauptstadt*"); and the run of content words
  right after any light verb of the clause ("My professor wants an
  *essay*"). A word in the middle of a clause mostly modifies something else
  ("a cat *translating* a book", "our *debate* night", "Post the *summary*
  on Slack"). A full stop after a number is an ordinal ("im 19.
  Jahrhundert"), not the end of a sentence.
- **German nouns** (capitalised words not opening a sentence) may be
  compounds, whose head comes last (``Token.noun``; used by the ranking).
- **Bounded**: only a task's first ``ANALYSED_CHARS`` characters are read
  (``analysed``), so a 5 MB task costs what a page costs; the trigger fast
  path, the ranking and the 50-entry cap all read that prefix, and a huge
  task gets the outcome its prefix gets. The LLM is shown the same prefix,
  with a note that the task goes on (``selector.prompt.prompt_task``); the
  task itself is stored, logged and given to the process whole.
- **Phrases** are runs of 2 or more words, stop words included; a run may
  also leave out pronouns and determiners (``SKIPPABLE``: "walk *me*
  through", "bounce *some* ideas") but never holds a negated word.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import replace
from functools import lru_cache
from typing import NamedTuple

import Stemmer

from vance_cli.base.records import frozen

ANALYSED_CHARS = 20_000
"""Most characters of a task the lexical analysis reads (≈ 3,000 words, some
ten pages): far past what names an intent, small enough that the offline
selector stays fast (uncapped, a 4.8 MB task took 40 s and 1.2 GB of memory)."""

ORDINAL_DIGITS = 2
"""Most digits of a number that a full stop makes an ordinal ("die 10. Klasse", "am 3. März");
a longer one ("… is 1,350. What …", "in 2023. Then …") ends its sentence."""

_WORD = re.compile(r"\w+", re.UNICODE)
_PIECE = re.compile(r"\w+|[.!?;:]+(?=\s|$)|[\n\r]+|,|(?<=\s)[-\u2013\u2014](?=\s)", re.UNICODE)
"""Words and the punctuation that ends a sentence or a clause part: a dash between spaces
sets a part apart as a comma does ("… austauschen, einfach so")."""
_DASHES = frozenset("-\u2013\u2014")
_CONTRACTION = re.compile(r"n['\u2019]t\b", re.IGNORECASE)
_COMPOUND_PARTICIPLE = re.compile(r"(?<=\w\w)-(?:\w+ed)\b")
_JOINED = re.compile(r"-\w")
"""The participle that ends a hyphenated adjective (open-*ended*, well-*defined*,
old-*fashioned*): one adjective with the word before it, never the verb (*end*, *define*)."""

ENGLISH_STOP_WORDS = frozenset("""
a about above after again against all also am an and any are as at be been before being
below between both but by can could did do does doing done down during each either else
ever every few for from further get gets got had has have having he her here hers him his
how i if in into is it its itself just let lets like me might mine more most much must my
myself need needs never no none nor not now of off on once only or other our ours out over
own please put same shall she should so some such than that the their them then there these
they this those through to too under until up us very via want wants was we were what
which while whom whose will with within without would you your yours
s t d ll m re ve
give gives gave given make makes made take takes took go goes went tell show help keep
create creates write writes produce prepare compose generate love wish draft drafts formulate
one two three four five six seven eight nine ten eleven twelve
task tasks
wanna gonna gotta whats wats thats im u ur pls plz
""".split())
"""English words dropped from a task: function words; light verbs that go with
any request ("give me", "make", "create", "write", "draft", "need"), so the
object names the deliverable; number words ("in three sentences"). The
question words who/when/where/why are kept. "task" is dropped too: every
request is one. So are the chat spellings of function words ("wanna", "whats",
"wats", "pls", "u"): typed requests are full of them."""

GERMAN_STOP_WORDS = frozenset("""
aber alle allem allen aller alles als also am an ander andere anderen auch auf aus bei
bin bis bitte bist da damit dann das dass dazu dein deine dem den der des dessen dich die
dies diese diesem diesen dieser dieses dir doch dort du durch ein eine einem einen einer
eines er es etwas euch euer für gegen habe haben hat hatte hier ich ihm ihn ihnen ihr ihre
im in ins ist ja jede jedem jeden jeder jedes jetzt kann kannst kein keine keinen können
könntest mal man manche mein meine meinem meinen meiner mich mir mit muss nach nicht nichts
nie niemals noch nun nur ob oder ohne sehr sein seine sich sie sind so soll solche sollte
über um und uns unser unsere unter vom von vor war waren was weil welche wenn werden wie
wir wird wurde würde würdest zu zum zur
gib geben gebe mach mache machen lass lasst zeig zeige hilf erstelle erstellen erstell
schreib schreibe schreiben heißt heißen lautet möchte möchten hätte gern gerne
brauche brauchen benötige benötigen verfasse verfassen formuliere formulieren suche
eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf
aufgabe
""".casefold().split())
"""German words dropped from a task, as ``ENGLISH_STOP_WORDS`` (wer/wann/wo/warum kept)."""

STOP_WORDS = ENGLISH_STOP_WORDS | GERMAN_STOP_WORDS
"""Words that carry no intent in either language. Multi-word tags and triggers
are matched on all words, stop words included ("for and against", "three
perspectives")."""

LIGHT_VERBS = frozenset("""
give gives gave make makes made take takes took tell show help keep create creates write writes
produce prepare compose generate draft drafts formulate want wants need needs like love wish get
wanna
gib geben gebe mach mache machen lass lasst zeig zeige hilf erstelle erstellen erstell schreib
schreibe schreiben möchte möchten hätte brauche brauchen benötige benötigen verfasse verfassen
formuliere formulieren suche
""".split())
"""The light verbs among the stop words: what follows one names the deliverable, wherever it
stands in its clause ("My professor *wants* an *essay*", "Ich *brauche* einen *Aufsatz*")."""

WRITING_VERBS = frozenset("""
write writes draft drafts formulate rewrite rephrase reword paraphrase word schreib schreibe
schreiben schreibst verfasse verfassen verfasst formulier formuliere formulieren formulierst
umformulieren
""".split())
"""Verbs that ask for one piece of writing, whatever its kind ("*Write* a short poem", "*Draft*
a polite email", "*Verfasse* eine Rede", "*Rewrite* this sentence so it sounds
professional"). Not "compose" (also music) nor "create" or "make" (also pictures and things).
The kind is the object's to name ("*Rewrite* the parser module in Rust" is code); the verbs
are light verbs."""

EDITING_VERBS = frozenset("""
fix correct proofread polish tidy tighten improve edit check
korrigiere korrigieren verbessere verbessern überarbeite überarbeiten prüfe prüfen
""".split())
"""Verbs that work on a given text: with a text or a flaw of one as their object ("*Fix*
the typo in this sentence", "*Correct* the spelling in my cover letter", "*Korrigiere*
die Rechtschreibung") they ask for one piece of writing, edited (``writing_job``). Not
*shorten* or *kürzen*: condensing a given text is what the summary recipe tags."""

TEXT_PARTS = frozenset("""
typo typos grammar spelling punctuation wording phrasing sentence sentences paragraph
paragraphs tone style prose text
tippfehler rechtschreibung grammatik zeichensetzung formulierung satz sätze absatz absätze stil
""".split())
"""What an edited text is made of or gets wrong: the object of an editing verb
(``EDITING_VERBS``) that makes the request one piece of writing."""

EDITED_TEXTS = frozenset("""
essay article report draft chapter thesis paper blog cv resume
aufsatz artikel bericht entwurf kapitel arbeit lebenslauf
""".split())
"""Texts that a specialised recipe writes but that an editing verb only corrects ("*Proofread*
this *essay*", "*Korrigiere* meinen *Aufsatz*"): one piece of writing, edited. As the object
of a writing or making verb they stay the specialised recipe's."""

DOCUMENT_GENRES = frozenset("""
list checklist agenda itinerary liste tagesordnung quiz worksheet handout flashcards
guide tutorial manual instructions anleitung bedienungsanleitung handbuch
""".split())
"""Kinds of writing that are a text whoever makes them: after a making verb too ("*Make* a
packing *list*", "*Erstelle* eine Pack*liste*", "*Create* a *guide* to …"), where a card or
a song could be meant by the other kinds (``MAKING_VERBS``)."""

SOURCE_WORDS = frozenset({"aus"})
"""After a light verb, the word that opens what something is made out of ("Mach *aus* den
Notizen eine Rede"): not the deliverable, the material."""

ARTICLES = frozenset("a an ein eine einen einem einer".split())
"""Indefinite articles: after the material of a light verb, one opens its object."""

INVENTING = (("come", "up", "with"), ("make", "up"), ("think", "up"), ("dream", "up"))
"""Phrasal verbs that ask for something thought up: with a short piece of writing as their
object ("*Come up with* a catchy slogan", "*Make up* a bedtime story") they ask for that
piece, as a light verb does."""

TURNING = frozenset("""
turn turns transform rewrite convert change make verwandle verwandeln wandle umwandeln
""".split())
"""Verbs that turn something given into something else: the deliverable is what follows
*into* ("*Turn* these notes *into* a LinkedIn post", "*Verwandle* das Protokoll *in* eine
Rede")."""

INTO = frozenset({"into", "in"})
"""The words after which a turning verb names what it makes (``TURNING``)."""

MAKING_VERBS = frozenset("""
make makes made create creates produce prepare generate compose mach mache machen erstelle
erstellen erstell
""".split())
"""The light verbs that make things, not only texts: "*Create* a birthday invitation" may be a
card to design, "*Compose* a song" music. With them a genre object is no piece of writing
(``writing_job``); the other light verbs ask for one ("I *need* a toast", "*Give* me a
slogan")."""

TEXT_GENRES = frozenset("""
email mail letter note message msg reply poem haiku limerick sonnet verse rhyme lyrics
toast speech eulogy slogan tagline motto caption headline title bio tweet post announcement
invitation invite greeting apology joke riddle story tale text description blurb
brief nachricht antwort gedicht reim liedtext rede ansprache trinkspruch spruch text beschreibung
werbespruch überschrift titel bildunterschrift einladung glückwunsch gruß anschreiben
list liste agenda itinerary tagesordnung
bewerbung absage zusage entschuldigung witz geschichte
ad advert advertisement listing anzeige stellenanzeige inserat quiz worksheet handout
flashcards guide tutorial manual instructions anleitung handbuch
""".split())
"""Nouns that name one short piece of writing: the deliverable of a request whose light verb
takes one as its object ("I need a *toast* for my brother's wedding", "Give me a catchy
*slogan*", "Ich brauche eine kurze *Rede*") is a piece of writing, as if a writing verb had
asked for it (``writing_job``). German compounds count by their head ("Geburtstags*gruß*").
Not the deliverables specialised recipes name (essay, article, summary, report, translation,
code), ones that are no text (logo, picture, playlist) nor ones that may be music (song,
Lied)."""

GENRE_HEAD = 4
"""Fewest letters of a genre that the end of a German compound is taken for ("Geburtstags*gruß*",
"Hochzeits*rede*")."""

_OBJECT_ENDS = frozenset("""
for about to of on from with at by in that which who für über an zu zum zur von mit bei
auf dass die der das
""".split())
"""Words that end the object after a light verb: a preposition or relative word opens what
it is for or about ("a toast *for* my brother", "eine Rede *für* die Hochzeit")."""

_ONLY_ENGLISH = ENGLISH_STOP_WORDS - GERMAN_STOP_WORDS
_ONLY_GERMAN = GERMAN_STOP_WORDS - ENGLISH_STOP_WORDS

CLAUSE_WORDS = frozenset({"and", "then", "afterwards", "please", "und", "dann", "danach",
                          "anschliessend", "bitte"})
"""Words that start a new clause (each clause has its own head words): coordinating
conjunctions, and the politeness word that opens a request ("…, please patch it")."""


QUESTION_WORDS = frozenset({"who", "when", "where", "why", "wer", "wann", "wo", "warum",
                            "wieso", "weshalb"})
"""Question words: content words of a task (who/when/where ask for a fact, why
for causes), but in a recipe's running text (title, description) they are
conjunctions ("use it only when …") and no evidence."""

NEGATIONS = frozenset({"not", "no", "never", "none", "nor", "without", "nicht", "nichts", "kein",
                       "keine", "keinen", "nie", "niemals", "ohne"})
"""Words that open a negated stretch: what follows, up to the next comma, sentence
end, clause word or contrast word, is what is *not* wanted — in a task ("Don't
change anything, just explain it") and in a recipe's description ("Delivers a
written analysis, not code or a finished essay"). It is no evidence."""

TOPIC_WORDS = frozenset({"about", "regarding", "concerning", "über", "bezüglich"})
"""Words that open the topic of a request: from one to the end of its clause, the words say
what the deliverable is about, not what it is ("chat *about whether remote work is changing*
…", "ein Referat *über die Geschichte des Buchdrucks*"). They still score, but are no
evidence of intent by themselves (``Token.topic``)."""

CONTRASTS = frozenset({"but", "instead", "aber", "sondern", "stattdessen"})
"""Words that end a negated stretch ("not X but Y")."""


@frozen
class Token:
    """One content word of a task.

    Attributes:
        word: the word, case-folded.
        position: its index among all words of the task (stop words included).
        head: True when it is a head word of its clause (see the module docstring).
        noun: True when it is written like a German noun: capitalised (and only the
            first letter), not the first word of its sentence.
        topic: True when it follows a word of ``TOPIC_WORDS`` in its clause.
        main: True when it is a head word of the request's first clause with a content
            word: its predicate or the predicate's object, the deliverable asked for.
    """

    word: str
    position: int
    head: bool
    noun: bool = False
    topic: bool = False
    main: bool = False


def fold(text: str) -> str:
    """Return ``text`` case-folded with accents removed (``Übersetzung`` → ``ubersetzung``)."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def analysed(task: str) -> str:
    """Return the part of ``task`` the lexical analysis reads: its first ``ANALYSED_CHARS``.

    A word cut by the limit is left out whole, so no fragment of it can match.

    Args:
        task: the whole task text.

    Returns:
        ``task`` itself when it is short enough; else a prefix of at most
        ``ANALYSED_CHARS`` characters ending before the cut word.
    """
    if len(task) <= ANALYSED_CHARS:
        return task
    head = task[:ANALYSED_CHARS]
    if _is_word_char(task[ANALYSED_CHARS]):
        end = len(head)  # from the end, not re.sub(r"\w+\Z"): that is quadratic in a long word
        while end and _is_word_char(head[end - 1]):
            end -= 1
        head = head[:end]
    return head


def _is_word_char(char: str) -> bool:
    r"""True for what ``\w`` matches in a str pattern: a letter, digit or ``_``."""
    return char.isalnum() or char == "_"


@lru_cache(maxsize=1)
def _stemmers() -> tuple[Stemmer.Stemmer, Stemmer.Stemmer]:
    # no cache of their own (maxCacheSize 0): ``word_keys`` keeps the results, and filling
    # PyStemmer's cache made each first stem of a word dearer than the stemming itself
    return Stemmer.Stemmer("english", 0), Stemmer.Stemmer("german", 0)


@lru_cache(maxsize=1)
def _exceptions() -> tuple[dict[str, str], dict[str, str]]:
    from vance_cli.ranking import stem_exceptions  # deferred: a table of ~900 words

    return stem_exceptions.ENGLISH, stem_exceptions.GERMAN


def is_exception(word: str) -> bool:
    """True for a word of the stem exceptions: a real word of its own, never a typo of another."""
    own_english, own_german = _exceptions()
    return word.casefold() in own_english or word.casefold() in own_german


@lru_cache(maxsize=8192)
def word_keys(word: str) -> tuple[str, str]:
    """Return the word's English and German stem keys (``"e:…"``, ``"g:…"``).

    Two words are the same word when either key is equal. A word the stemmer
    would conflate with a recipe word of another meaning (``stem_exceptions``,
    drawn from general word lists: *personal* is no *person*, *Gründer* no
    *Gründe*) is keyed by its own lemma instead of the stem.
    """
    lower = word.casefold()
    english, german = _stemmers()
    own_english, own_german = _exceptions()
    english_key = own_english.get(lower)
    german_key = own_german.get(lower)
    return ("e:" + (english_key if english_key is not None
                    else fold(english.stemWord(fold(lower)))),
            "g:" + ("=" + german_key if german_key is not None
                    else fold(german.stemWord(lower))))


def phrase_keys(words: tuple[str, ...]) -> tuple[str, str]:
    """Return the English and German keys of a run of words (each word stemmed)."""
    keys = [word_keys(w) for w in words]
    return ("e:" + " ".join(k[0][2:] for k in keys), "g:" + " ".join(k[1][2:] for k in keys))


def words(text: str) -> list[str]:
    """Return every word of ``text``, case-folded, in order."""
    return _WORD.findall(text.casefold())


class _Word(NamedTuple):
    """One word of a scanned text."""

    raw: str
    word: str  # raw, case-folded
    position: int
    sentence_start: bool
    clause_start: bool
    negated: bool
    punctuated: bool  # punctuation stands right before it (a comma, unless it opens a clause)


def _walk(text: str, negated: bool = False
          ) -> Iterator[tuple[str, str, bool, bool, bool, bool]]:
    """Yield each word of ``text`` as a tuple of six (see ``_Word``).

    Its fields: raw, case-folded, sentence start, clause start, negated, after
    punctuation.

    A generator of plain tuples: recipe descriptions of thousands of words
    go through here (``prose_words``). ``negated``: the text continues a
    negated stretch (``negated_at`` walks a text piece by piece). A full stop
    right after a number of one or two digits ends no sentence: it is a German
    ordinal ("die 10. Klasse", "im 19. Jahrhundert"); after a longer number,
    or one with a separator ("my rent is 1,350. What …"), it does.
    """
    sentence = clause = True
    ordinal = punctuated = False  # the last piece may be an ordinal; punctuation
    if "ed" in text and "-" in text:
        text = _COMPOUND_PARTICIPLE.sub("", text)
    for piece in _PIECE.findall(_CONTRACTION.sub(" not", text)):
        if not piece[0].isalnum() and piece[0] != "_":
            if piece not in _DASHES and piece != "," and not (ordinal and piece == "."):
                sentence = clause = True
            negated = ordinal = False
            punctuated = True
            continue
        ordinal = piece.isdigit() and len(piece) <= ORDINAL_DIGITS and not punctuated
        word = piece.casefold()
        if word in CLAUSE_WORDS or word in CONTRASTS:
            clause = clause or word in CLAUSE_WORDS
            negated = False
        elif word in NEGATIONS:
            negated = True
        yield piece, word, sentence, clause, negated, punctuated
        sentence = clause = punctuated = False


def _scan(text: str) -> list[_Word]:
    """Split text into words, noting sentence and clause starts and negated stretches."""
    return [_Word(*walked[:2], position, *walked[2:])
            for position, walked in enumerate(_walk(text))]


def negated_at(text: str, offsets: Iterable[int]) -> dict[int, bool]:
    """Tell for each offset whether a word starting there is in a negated stretch.

    The stretch must be opened by an earlier word (``NEGATIONS``), by the same
    rule as ``tokens`` and ``prose_words`` (it ends at a comma, sentence end,
    clause word or contrast word): in "Do not write an essay, just book a
    flight" the offset of ``write`` is negated, that of ``just`` is not. A
    negation word at the offset itself does not count. One pass over the
    text, however many offsets.

    Args:
        text: the text.
        offsets: character offsets into ``text``, each the start of a word.

    Returns:
        offset → True when negated.
    """
    found: dict[int, bool] = {}
    negated, done = False, 0
    for offset in sorted(set(offsets)):
        # The sentinel word "_" is no negation, clause or contrast word: its flag is
        # the state the piece leaves behind, and it changes nothing for the next piece.
        *_before, last = _walk(text[done:offset] + " _", negated)
        negated = last[4]
        found[offset], done = negated, offset
    return found


def language(text: str) -> str | None:
    """Return ``"en"`` or ``"de"`` when the text's function words say so, else None.

    Counts the words that are stop words of one language only (``the``,
    ``please`` / ``der``, ``bitte``); a tie (no such word, or a mixed text)
    is None.
    """
    found = words(text)
    english = sum(w in _ONLY_ENGLISH for w in found)
    german = sum(w in _ONLY_GERMAN for w in found)
    if english == german:
        return None
    return "en" if english > german else "de"


POLITE = frozenset("please pls plz kindly can could would will you bitte kannst könntest "
                   "würdest du mal".split())
"""Words before a request's predicate ("Can you please *summarise* …", "Kannst du mal …")."""


def opening(text: str) -> str | None:
    """Return the first word of ``text`` after ``POLITE`` words (case-folded), or None."""
    return next((w for w in words(text) if w not in POLITE), None)


def writing_job(task: str) -> str | None:
    """Return the word that makes the task one piece of writing, or None.

    The predicate is that of the first clause with a word of substance: its
    first word that is not a stop word — or, unless the task is clearly
    English, its last word (German puts the verb of a modal request last).
    The task asks for one piece of writing when

    - that predicate is a writing verb ("Can you *write* a cover letter",
      "*Draft* a polite email", "Kannst du mir eine Rede *schreiben*?"); or
    - the object of a light verb (not one of ``MAKING_VERBS``), of a verb of
      inventing (``INVENTING``) or what a turning verb makes (``TURNING``,
      after *into*) names a short piece of writing (``TEXT_GENRES``): "I
      need a *toast* for my brother's wedding", "Come up with a catchy
      *slogan*", "Turn these notes into a LinkedIn *post*", "Ich brauche
      eine kurze *Rede*". The object's name is its last word before a
      preposition, a participle, a comma or the clause end: "a LinkedIn
      *post* about …" and "a *post* announcing …" name a post, "a *post*
      office" does not.

    - the request names such a piece without a verb (``_named_text``): "*haiku*
      about the first snow", "cover *letter* for a barista job".

    A writing verb later on is a step of a larger request ("Add dark mode
    and *write* tests"). A negated verb or object does not count ("Don't
    write anything, just …").

    Args:
        task: the task text (its material already left out, ``material.request``).

    Returns:
        The writing verb or the genre word, case-folded.
    """
    verb_last = language(task) != "en"
    joined = _compound_parts(task)
    clause: list[_Word] = []
    for w in [*_scan(task), None]:
        if w is not None and not w.clause_start:
            clause.append(w)
            continue
        at = next((i for i, c in enumerate(clause)
                   if c.word in WRITING_VERBS or is_content(c.word)), None)
        if (at is not None and w is not None and at == len(clause) - 1
                and w.word in CLAUSE_WORDS and clause[at].word in EDITING_VERBS):
            clause.append(w)  # "Korrigiere *bitte* die Rechtschreibung": politeness, no clause
            continue
        if at is not None:
            return _writing_predicate(clause, at, verb_last, joined)
        clause = [w] if w is not None else []
    return None


def _writing_predicate(clause: list[_Word], at: int, verb_last: bool,
                       joined: frozenset[int] = frozenset()) -> str | None:
    """The writing verb or genre of ``clause``, whose first word of substance is ``clause[at]``.

    ``joined``: positions of words a hyphen joins to the next (``_compound_parts``).
    """
    first = clause[at]
    for candidate in (first, clause[-1] if verb_last else None):
        if (candidate is not None and candidate.word in WRITING_VERBS
                and not candidate.negated):
            return candidate.word
    edited = first.word in EDITING_VERBS and not first.negated
    found = _object_start(clause, at, verb_last, edited)
    if found is None:
        return _named_text(clause, at, joined)
    start, making = found
    last = _object_head(clause[start:], joined)
    if last is None:
        return None
    german_noun = (verb_last and not last.sentence_start
                   and last.raw[:1].isupper() and last.raw[1:].islower())
    text = last.word in TEXT_PARTS or last.word in EDITED_TEXTS or is_genre(last.word, german_noun)
    if edited or (making and _comparative(clause, last) and last.word not in EDITED_TEXTS):
        # an edited text or its flaw: "Fix the *typo*", "Correct my cover *letter*", "Make
        # this *paragraph* shorter", "Korrigiere die *Rechtschreibung*"
        return (first.word if edited else last.word) if text else None
    document = _document(last.word, german_noun)
    if (making and not document) or (document and _of_own(clause, last)):
        # "Create a birthday invitation" may be a card; "a list of my contacts" is their
        # data, not a text to write
        return None
    return last.word if is_genre(last.word, german_noun) else None


def _named_text(clause: list[_Word], at: int, joined: frozenset[int]) -> str | None:
    """The genre a request without a verb names: "*haiku* about the first snow".

    The request opens, after at most an article, with a noun phrase whose head is a
    short piece of writing (``is_genre``) and which a preposition, a comma or the end
    closes, with no determiner or pronoun before that head: in "Send *a* message",
    "Reply *all* to …", "Tweet *this* …" the first word is a verb.
    """
    if not clause[0].sentence_start or any(c.word not in ARTICLES for c in clause[:at]):
        return None
    head = _object_head(clause[at:], joined)
    if head is None:
        return None
    i = next(i for i, c in enumerate(clause) if c.position == head.position)
    after = clause[i + 1] if i + 1 < len(clause) else None
    if (any(c.word in SKIPPABLE or c.word in _DETERMINERS for c in clause[at:i])
            or (after is not None and after.word not in _OBJECT_ENDS and not after.punctuated)):
        return None
    capitalised = head.raw[:1].isupper() and head.raw[1:].islower()
    return head.word if is_genre(head.word, capitalised) else None


_DETERMINERS = frozenset("all alle allen every each jede jeden jedes your deine deinen ihre"
                         .split())


def _object_start(clause: list[_Word], at: int, verb_last: bool,
                  edited: bool) -> tuple[int, bool] | None:
    """Where the object of the clause's verb starts, and whether a making verb governs it.

    None when no verb of ``writing_job`` governs an object: no light, inventing,
    turning or editing verb (``edited``) before it.
    """
    words = tuple(c.word for c in clause)
    invented = next((j + len(verb) for j in range(at + 1) for verb in INVENTING
                     if words[j:j + len(verb)] == verb), None)
    into = next((i + 1 for i in range(at + 1, len(clause)) if words[i] in INTO
                 and (words[i] != "in" or verb_last)  # "in" turns only in German
                 and not TURNING.isdisjoint(words[:i])), None)
    if into is None and verb_last and not SOURCE_WORDS.isdisjoint(words[:at]):
        # "Mach aus meinen Stichpunkten *einen* Post": the object follows the article
        into = next((i for i in range(at, len(clause)) if words[i] in ARTICLES), None)
    if invented is not None or into is not None:
        # "come up with", "make up", "turn … into": their object as a light verb's
        begin = invented if invented is not None else into
        start = next((i for i in range(begin or 0, len(clause)) if is_content(words[i])),
                     len(clause))
        return None if start == len(clause) else (start, False)
    if edited:  # the edited text: "Fix the *typo* in this sentence"
        return next((i for i in range(at + 1, len(clause)) if is_content(words[i])),
                    len(clause)), False
    if not any(c.word in LIGHT_VERBS for c in clause[:at]):
        return None
    return at, not any(c.word in LIGHT_VERBS and c.word not in MAKING_VERBS
                       for c in clause[:at])


def _object_head(words: list[_Word], joined: frozenset[int] = frozenset()) -> _Word | None:
    """The last word of substance of the object that opens ``words``: its noun phrase's head.

    A word inside a hyphenated compound (``joined``: positions of words a hyphen joins
    to the next) ends nothing: "a step-*by*-step guide", "eine Schritt-*für*-Schritt-Anleitung".
    """
    last = None
    for i, c in enumerate(words):
        if c.position - 1 in joined and i:
            if is_content(c.word):
                last = c
            continue
        if c.word in _OBJECT_ENDS or c.negated or (i and c.punctuated):
            break
        if last is not None and c.word.endswith("ing") and c.word not in TEXT_GENRES:
            break  # a participle after the head: "a post *announcing* our new office"
        if last is not None and c.word in COMPARATIVES:
            break  # what the text is to become: "this paragraph *shorter*"
        if is_content(c.word):
            last = c
    return last


COMPARATIVES = frozenset("""
more less shorter longer clearer simpler friendlier politer nicer crisper punchier tighter
kürzer länger klarer einfacher freundlicher höflicher knapper
""".split())
"""What a making verb turns a text into ("Make this email *shorter*", "Mach den Absatz
*kürzer*"): an edit of the text."""


SEEMING_VERBS = frozenset("sound sounds read reads look looks seem seems klingen klingt wirken "
                          "wirkt".split())
"""Verbs of how a text comes across: after a made text ("Make this paragraph of my letter
*sound* more confident") they say what it is to become, as a comparative does."""


def _comparative(clause: list[_Word], head: _Word) -> bool:
    """True when a comparative (``COMPARATIVES``) or a seeming verb follows ``head``."""
    after = [c.word for c in clause if c.position > head.position]
    return not COMPARATIVES.isdisjoint(after[:3]) or not SEEMING_VERBS.isdisjoint(after[:6])


_OWN_WORDS = frozenset("my our mine meine meinen meiner meinem meines unsere unseren unserer "
                       "unserem".split())


def _of_own(clause: list[_Word], head: _Word) -> bool:
    """True when a first-person possessive follows ``head`` closely ("a list *of my* contacts")."""
    after = [c.word for c in clause if c.position > head.position][:4]
    return not _OWN_WORDS.isdisjoint(after) and bool(after) and after[0] in {
        "of", "von", "aller", "all", "with", "mit", "aus"}


def _document(word: str, compound: bool) -> bool:
    """True when ``word`` is one of ``DOCUMENT_GENRES`` (a German compound by its head)."""
    return word in DOCUMENT_GENRES or (compound and any(word.endswith(head)
                                                        for head in DOCUMENT_GENRES
                                                        if len(head) >= GENRE_HEAD))


def is_genre(word: str, compound: bool = False) -> bool:
    """True when ``word`` names a short piece of writing (``TEXT_GENRES``).

    Args:
        word: a case-folded word.
        compound: the word is written as a German noun, so it may be a compound
            whose head is the genre ("Geburtstagsgruß"); an English word's end is
            chance ("history" is no "story", "universe" no "verse").
    """
    keys = word_keys(word)
    if not _genre_keys().isdisjoint(keys):
        return True
    stem = keys[1][2:]
    return compound and any(stem.endswith(head) for head in _genre_heads())


@lru_cache(maxsize=1)
def _genre_keys() -> frozenset[str]:
    return frozenset(key for genre in TEXT_GENRES for key in word_keys(genre))


@lru_cache(maxsize=1)
def _genre_heads() -> tuple[str, ...]:
    return tuple(sorted({word_keys(genre)[1][2:] for genre in TEXT_GENRES
                         if len(word_keys(genre)[1]) - 2 >= GENRE_HEAD}))


def prose_words(text: str) -> list[str]:
    """Return the words of running text that are evidence for what it describes.

    Drops negated stretches (``NEGATIONS``) and ``QUESTION_WORDS``.
    """
    return [word for _raw, word, _sentence, _clause, negated, _punctuated in _walk(text)
            if not negated and word not in QUESTION_WORDS]


def negated_words(text: str) -> list[str]:
    """Return the content words of ``text``'s negated stretches (``NEGATIONS``), case-folded.

    What a recipe's description says it is *not* for ("Not for comparing products with
    sources to cite").
    """
    return [word for _raw, word, _sentence, _clause, negated, _punctuated in _walk(text)
            if negated and is_content(word) and word not in NEGATIONS]


def is_content(word: str) -> bool:
    """True for a word that carries meaning: not a stop word, not a number."""
    return word not in STOP_WORDS and not word.isdigit()


def tokens(task: str) -> list[Token]:
    """Return the task's content words with their position and whether they are a head word.

    Words in a negated stretch are left out. The first parts of a hyphenated
    compound are no head words: its head is its last part ("an essay-grading
    *script*", "eine Schritt-für-Schritt-*Anleitung*").
    """
    lang = language(task)
    verb_last = lang != "en"
    joined = _compound_parts(task)
    found: list[Token] = []
    clause: list[Token] = []
    objects: set[int] = set()  # indices in clause of a content word right after a light verb
    parts: set[int] = set()    # German: indices in clause of the last content word before a comma
    fresh = opened = light = topic = False  # opened: the clause's first word is a content word
    source = was_source = False  # in the material a light verb makes something out of
    sourced: set[int] = set()    # indices in clause of the content words of that material
    for w in _scan(task):
        word = w.word
        content = is_content(word) and word not in CLAUSE_WORDS
        if w.clause_start:
            found.extend(_heads(clause, opened, verb_last, objects, parts,
                                main=not any(t.head for t in found), sourced=sourced,
                                joined=joined))
            clause, objects, parts, fresh, light, topic = [], set(), set(), True, False, False
            source = was_source = False
            sourced = set()
        elif w.punctuated:
            topic = False  # a topic ends with its clause or at a comma
            if lang == "de" and clause:
                parts.add(len(clause) - 1)
        if fresh and word not in CLAUSE_WORDS:
            opened, fresh = content, False
        if content and not w.negated:
            if light:
                objects.add(len(clause))
            if source:
                sourced.add(len(clause))
            noun = not w.sentence_start and w.raw[:1].isupper() and w.raw[1:].islower()
            clause.append(Token(word, w.position, False, noun, topic))
        # "Mach *aus* meinen Stichpunkten einen Post": what a light verb makes something
        # out of is its material; the object is what follows the next article
        source = (light and word in SOURCE_WORDS) or (source and word not in ARTICLES)
        light = not source and (word in LIGHT_VERBS or (light and not content)
                                or (word in ARTICLES and was_source))
        was_source = source
        topic = topic or word in TOPIC_WORDS
    found.extend(_heads(clause, opened, verb_last, objects, parts,
                        main=not any(t.head for t in found), sourced=sourced, joined=joined))
    return found


def _heads(clause: list[Token], opened_by_content: bool, verb_last: bool,
           objects: set[int], parts: set[int], main: bool = False,
           sourced: frozenset[int] | set[int] = frozenset(),
           joined: frozenset[int] = frozenset()) -> list[Token]:
    """Mark the head words of one clause (see the module docstring).

    ``opened_by_content``: the clause's first word is a content word, its
    predicate. ``verb_last``: the task may be German, so the clause's last
    content word may be its verb — unless it is written as a noun. ``objects``:
    indices of the content words that follow a light verb; each starts a run.
    ``parts``: in German, indices of the last content word before a comma,
    which ends a clause of its own there ("… über Ideen *plaudern*, hast du
    Lust?"); one not written as a noun is a verb as well. A verb ends the
    topic before it: it is the request, not what it is about. ``main``: this is the
    request's first clause with a content word; its head words are ``Token.main``.
    ``sourced``: indices of the material a light verb makes something out of ("aus
    meinen *Stichpunkten*"), which are no head words. ``joined``: positions of words
    a hyphen joins to the next (``_compound_parts``), no head words either.
    """
    heads = {0}
    verbs = {i for i in (*parts, len(clause) - 1) if verb_last and clause and not clause[i].noun}
    heads |= verbs
    starts = set(objects) | ({0} if clause and not opened_by_content else set())
    for start in starts:
        i = start
        heads.add(i)
        while i + 1 < len(clause) and clause[i + 1].position == clause[i].position + 1:
            i += 1
            heads.add(i)
    heads -= set(sourced)
    heads -= {i for i, t in enumerate(clause) if t.position in joined}
    return [replace(t, head=i in heads, topic=t.topic and i not in verbs,
                    main=main and i in heads) for i, t in enumerate(clause)]


SKIPPABLE = frozenset("""
me us him her them it this that these those a an the some any my our your his their
mir uns ihm ihnen es ein eine einen einem einer der die das den dem des mein meine meinen
unser unsere unseren
""".split())
"""Pronouns and determiners a phrase may have inside it in the task and not in the
tag: "walk *me* through" is "walk through", "bounce *some* ideas" is "bounce ideas"."""


PARTICLES = frozenset("""
up down out through over off around back apart together
""".split())
"""Particles of English phrasal verbs, which may stand after the verb's object: "boil *this
email thread* down" is "boil down", "sum *the meeting* up" is "sum up"."""

PARTICLE_GAP = 4
"""Most words between a verb and its particle (``PARTICLES``)."""


def _compound_parts(text: str) -> frozenset[int]:
    """The positions (as ``_scan`` counts words) of words a hyphen joins to the next word."""
    if "-" not in text:
        return frozenset()
    if "ed" in text:
        text = _COMPOUND_PARTICIPLE.sub("", text)
    text = _CONTRACTION.sub(" not", text)
    pieces = (m for m in _PIECE.finditer(text) if m.group()[0].isalnum() or m.group()[0] == "_")
    return frozenset(position for position, m in enumerate(pieces) if _JOINED.match(text, m.end()))


def ngrams(task: str, longest: int) -> list[tuple[int, tuple[str, ...]]]:
    """Return ``(start position, words)`` for every run of 2 to ``longest`` words.

    Stop words stay in (``for and against``), as in the tags they are matched
    against; runs are also taken with ``SKIPPABLE`` words left out. No run
    holds or skips a negated word. A word and a particle (``PARTICLES``) up
    to ``PARTICLE_GAP`` words later in its clause are a run of two as well: a
    phrasal verb with its object in between. No run ends on the first part of
    a hyphenated compound, whose head is its last part: "a *step-by-step*
    guide" holds *step by step*, "eine *Schritt-für-Schritt*-Anleitung" and
    "an *essay*-grading script" do not (the words still count one by one).
    """
    scanned = _scan(task)
    joined = _compound_parts(task)
    found = [(w.position, w.word) for w in scanned]
    negated_before = [0]  # negated_before[p]: negated words before position p
    for w in scanned:
        negated_before.append(negated_before[-1] + w.negated)
    lean = [(p, w) for p, w in found if w not in SKIPPABLE]
    grams: dict[tuple[int, tuple[str, ...]], None] = {}
    for sequence in (found, lean):
        for n in range(2, longest + 1):
            for i in range(len(sequence) - n + 1):
                run = sequence[i:i + n]
                if run[-1][0] in joined:
                    continue
                if negated_before[run[-1][0] + 1] == negated_before[run[0][0]]:
                    grams[run[0][0], tuple(w for _p, w in run)] = None
    for i, w in enumerate(scanned):
        for later in scanned[i + 2:i + 2 + PARTICLE_GAP]:
            if later.clause_start:
                break
            if (later.word in PARTICLES
                    and negated_before[later.position + 1] == negated_before[w.position]):
                grams.setdefault((w.position, (w.word, later.word)), None)
    return list(grams)
