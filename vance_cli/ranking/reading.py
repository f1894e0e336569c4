"""What a task shows rather than says: how the ranking reads a task before its words count.

Word matching sees words; some evidence of intent is in the shape of a task
instead. Each rule here turns a shape into a plain word the recipes' tags
already use, so every later rule (stems, head words, negation, phrases)
applies unchanged. They are facts about how people write requests, not about
any set of tasks (docs/delegate.md, "Offline selector"):

- **Material** (``material.request``) is left out first.
- **Measures**: a word joined to a number by a hyphen says how big, not
  what: "a *two-minute* toast", "an *80-word* description", "die
  *4-Tage*-Woche" read as the number alone.
- **Codes of no program**: *code* after *QR*, *promo*, *discount*, *zip*,
  *dress*, *area*, *Rabatt* … names no program and is left out: "Create a
  QR code for our menu" asks for no code.
- **Code**: a file name with a source-code extension (``x.py``), a path of
  folders (``services/billing/``, ``/api/v1``), a call (``calculate_vat()``)
  or an identifier in camelCase or snake_case (``useEffect``,
  ``parse_date``) reads as the word ``code``; a sentence that names
  such code and asks *how* or *what* ("What does src/x.py do?") asks for an
  explanation: ``explain`` opens it. Pasted code (``material.pasted_code``)
  is material, and adds ``code``; the first sentence of the request that
  asks *how* or *what* ("What does this bash script do, line by line?")
  then asks for an explanation too.
- **Programs**: a script, function, query … of a programming language or
  framework, up to two words after it ("a *bash script*", "ein
  *Python-Skript*", "a *Go flag parser*", "our *React app*", "a *parser in
  Rust*"; ``CODE_ARTEFACTS``) reads as ``code`` too, with the same rule for
  a question about it: "Write a bash script that …" asks for code, not for
  a piece of writing. A script alone may be a video's.
- **Ports**: translating or converting into a programming language
  ("Translate our Java class into Rust") is a port: the verb reads as ``port``.
- **Languages**: a given text wanted in a language — a sentence that points
  at it (*this*, *these* …), asks for nothing else before it (only light
  verbs, *render*, *put* …) and ends with *in* and a language ("Render this
  press release in French", "I need this privacy policy in French") — asks
  to translate it: *in* reads as *into*, which the translating recipes tag.
  "Explain this concept in German" asks for an explanation.
- **Plain words**: translating into plain English, plain language, simple
  terms, einfache Sprache … ("Translate this regex into plain English") is no
  other language: it asks for an explanation, and the verb reads as ``explain``.
- **Writing verbs typed fast**: a writing verb with two neighbouring
  letters swapped (never the first) reads as that verb: "*wirte* a polite
  msg", "*darft* an email". The spelling rule of the ranking leaves words
  under six letters alone; these few verbs are the predicate of the
  single-job rule, and no real word is one swap from them.
- **Who is asking**: a clause in which the person says what they are ("I'm a
  project manager and …", "Ich bin Lehrerin, …": *I'm*/*I am*/*ich bin* and up
  to ``SELF_WORDS`` words) is context, not the request: it is left out.
- **Numbers**: a task that gives ``GIVEN_NUMBERS`` or more numbers (digit
  groups: amounts, percentages, dates) and asks about them — *how much*,
  *how many*, *wie viele* …, or a *what*/*which*/*how* question — asks for a
  calculation: the question word reads as ``calculate``. Given numbers
  without such a question add ``calculate`` as one more word.
- **Decisions**: a question that asks which way to decide — *should I/we/our …*,
  *is it worth*, *decide/choose between*, *which would you pick*, *what
  would you do*, *we're considering*, *soll(en) ich/wir*, *lohnt es sich*,
  *wir überlegen, ob* … ("Should I buy a flat now or wait?", "Is it worth
  switching our team to Teams?", "… 10% higher rent, or I can leave. What
  would you do?") — asks for a weighed recommendation: ``weigh`` opens it,
  and its numbers are no question to compute. Not one about today or
  tomorrow ("Should I take an umbrella today?" needs the weather).
- **Scale**: moving a whole system — a move verb (*move*, *migrate*,
  *port*, *upgrade*, *umziehen* …), a scope word (*all*, *entire*, *whole*,
  *komplett* …) and a target (*to*, *onto*, *auf*, *nach*) in one sentence,
  and nothing of *my* own ("move all my photos to the laptop" is an errand)
  — is a migration of many steps: the verb reads as ``migration``, and
  ``subtasks`` is added.
- **Roles**: a list of three or more people or roles, each with its
  determiner ("a CFO, a head of sales and a customer", "der
  Geschäftsführung, des Betriebsrats und einer Teamleiterin"), adds
  ``perspectives`` — and ``roles`` as well when the task asks for views
  (``OPINION_WORDS``: *hear*, *say*, *see*, *sagen* …).
- **Live questions** (``live_question``): one question about the person's
  own data as it is now, which no recipe can reach.

Added words (``Reading.extra``) count as content words, never as head words.
Every rule is one linear pass over the ``lexicon.analysed`` prefix.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import lru_cache

from vance_cli.base.patterns import Lazy
from vance_cli.base.records import frozen
from vance_cli.ranking.lexicon import WRITING_VERBS, is_content, language, writing_job
from vance_cli.ranking.material import pasted_code, request

GIVEN_NUMBERS = 2
"""Fewest digit groups that make numbers *given*: one number is a fact of the
question ("How many people lived in Berlin in 1900?"); two or more are data to
compute with ("… 250 euros a month at 6% …", "between 3 March and 17 October")."""

SOURCE_EXTENSIONS = frozenset("""
py pyi js mjs cjs ts tsx jsx go java kt kts rs rb php c h cc cpp hpp cs swift scala sh bash
vue svelte sql pl pm lua dart ex exs clj hs ml erl fs ipynb
""".split())
"""File extensions of source code (not of documents or data: a ``.pdf`` is material to
read, a ``.json`` may hold strings to translate)."""

BUILD_FILES = frozenset("""
makefile dockerfile jenkinsfile gemfile rakefile vagrantfile procfile cmakelists.txt
package.json pyproject.toml cargo.toml go.mod pom.xml build.gradle tsconfig.json
""".split())
"""Files of a program's build by their names alone ("Fix our *Makefile*"): code."""

PROGRAMMING_LANGUAGES = (
    "python", "java", "javascript", "typescript", "rust", "golang", "kotlin", "swift", "c",
    r"c\+\+", "c#", "ruby", "php", "scala", "haskell", "perl", "bash", "elixir", "dart", "lua",
    "julia", "clojure", "erlang", "fortran", "cobol", "pascal", "objective-c", "zig")
"""Programming languages, as regular expressions ("Go" is left out: "ready *to go*"; it
counts written with its capital, ``GO_LANGUAGE``)."""

GO_LANGUAGE = r"(?-i:Go)"
"""Go, the language, as it is written ("Port this script to *Go*", "a *Go* service"): with its
capital only, so "ready to go" stays a phrase."""

CODE_ARTEFACTS = ("script", "skript", "function", "funktion", "class", "klasse", "module",
                  "modul", "program", "programm", "snippet", "query", "method", "methode",
                  "library", "bibliothek", "package", "paket", "scraper", "parser", "cli",
                  "code", "app", "project", "projekt", "component", "komponente", "service",
                  "backend", "frontend", "api", "repo", "codebase")
"""What a program is made of: after a programming language or framework ("a *bash script*",
"ein *Python-Skript*", "a *SQL query*", "our *React app*") or before "in" one ("a script in
Rust") it is code."""

FRAMEWORKS = ("react", "vue", "angular", "svelte", "django", "flask", "fastapi", "rails",
              "spring", "laravel", "express", "node", "next.js", "nuxt", "flutter", "swiftui",
              "android", "ios", "unity", "wordpress", "web", "mobile")
"""Frameworks and platforms that programs are built on: as the programming languages, before a
program's part ("this *Django project*", "our *React app*")."""

TRANSLATE_VERBS = frozenset("""
translate translating convert converting rewrite rewriting übersetze übersetzen übersetz
konvertiere konvertieren
""".split())
"""Verbs that put a text into another language; into a programming language, a port."""

SELF_WORDS = 3
"""Most words after *I'm a* that say who is asking ("a *project manager*"); a longer clause
says more than a role ("I'm a bit lost with this decorator in app/auth.py")."""

MOVE_VERBS = frozenset("""
move moving migrate port porting upgrade convert switch
umziehen ziehe zieh umstellen stelle stell migrieren migriere portieren portiere
""".split())
"""Verbs that move a system elsewhere (German separable verbs also by their stem)."""

OPINION_WORDS = frozenset("""
hear say says think thinks see sees view views take takes weigh advise comment react
opinion opinions perspective perspectives
hören höre sagen sagt sage denken denkt sehen sieht meinen meint halten hält raten rät fragen
frag frage sicht meinung meinungen
""".split())
"""Words that ask for someone's view: with a list of roles, the roles are to give theirs."""

DETERMINERS = frozenset("""
a an the our my your their his her ein eine einen einem einer eines der die das des dem den
unser unsere unserer unseres unserem mein meine meiner meines meinem
""".split())
"""Words that open an item of a list of roles ("*a* CFO", "*des* Betriebsrats")."""

ROLE_WORDS = 4
"""Most words of one item after its determiner ("a customer success lead")."""

ROLES = 3
"""Fewest items of a list of roles."""

LIVE_WORDS = frozenset("""
now currently current today tonight jetzt gerade aktuell aktuelle aktuellen aktueller momentan
derzeit heute
""".split())
"""Words of the present moment (``live_question``; also the phrases of ``_LIVE_PHRASE``)."""

NOW_WORDS = frozenset("""
now today tonight yesterday jetzt gerade heute gestern momentan
""".split())
"""Adverbs that put a question at this moment or the day just gone (also "right now", "last
night", "im Moment" …, ``_NOW_PHRASE``): asked about the world ("Who won *last night's*
match?", "Is the train on time *today*?"), the answer is live data. Not *current* or
*aktuell*: they name the holder of an office or a state of knowledge ("the current
Secretary-General", "current research"), which is a fact or research."""

QUESTION_OPENERS = frozenset("""
who what whats wats when where which how is are was were does did do has have
wer was wann wo welche welcher welches wie ist sind war waren hat haben gibt
wofür wozu womit woher wohin worüber wovon woran worauf wodurch
""".split())
"""Words that open a direct question about the world. Not *can*, *could*, *would*, *will*,
*kannst* …: those open a request ("Can you translate this for tonight?")."""

ACTION_VERBS = frozenset("""
remind send transfer order buy book pay call phone text print unlock lock cancel schedule post
publish install download upload sign register renew refund email forward
erinnere erinner schick schicke sende überweise bestell bestelle kauf kaufe buch buche bezahl
bezahle ruf rufe drucke kündige installiere
""".split())
"""Verbs of acts in the world that no recipe performs (it writes, computes, explains …):
as a request's predicate they ask vance to order, book, pay, send, call or remind. Not
*set* ("set up a debate"), *turn* ("turn these notes into a post") or *move* (a migration)."""

GERMAN_ACTION_INFINITIVES = frozenset("""
abschicken schicken senden verschicken überweisen bestellen kaufen buchen bezahlen anrufen
drucken ausdrucken kündigen installieren erinnern
""".split())
"""The same acts as the last word of a German modal request ("Kannst du … *abschicken*?")."""

_POLITE = frozenset("please pls can could would will you bitte kannst könntest würdest du "
                    "mal".split())
_HAND_OVER = frozenset({"send", "email", "forward", "schick", "schicke", "sende"})
_TO_ME = frozenset({"me", "us", "mir", "uns"})

_WH_WORDS = frozenset("who what whats wats when where which how wer was wann wo welche welcher "
                      "welches wie wofür wozu womit woher wohin worüber wovon woran worauf "
                      "wodurch".split())

FACT_WORDS = 12
"""Most words of a question that asks for one fact (``fact_question``)."""

FUTURE_WORDS = frozenset("""
tomorrow next will going tonight morgen nächste nächsten nächster nächstes wird werden
""".split())
"""Words of what is to come: a question about it asks for a forecast or a plan, not a fact."""

_WORD = re.compile(r"\w+")
_DIGITS = re.compile(r"\d+(?::\d+)*")
_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?]+(?=[^\s.!?]))*(?:[.!?]+|\n|$)")
_NUMBER_WORDS = ("one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                 "eins|ein|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|elf|zwölf")
_MEASURE = Lazy(rf"(?<![\w-])(\d+|{_NUMBER_WORDS})(?!-liners?\b)(?:-[^\W\d_]\w*)+", re.IGNORECASE)
_TOKEN = re.compile(r"\S+")
_IDENTIFIER = Lazy(r"[a-z]{2,}[a-z0-9]*(?:[A-Z][a-z0-9]+)+|_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+_*"
                  r"|__[a-z][a-z0-9_]*__")
_CALL = Lazy(r"^(?:[A-Za-z_]\w*(?:\.\w+)*\(\)|[A-Za-z_]\w*(?:[_.]\w+)+\([^()\s]*\))$")
_SOURCE_FILE = Lazy(r"^[\w./-]*\w\.([a-z]{1,5})$")
_PATH_PART = Lazy(r"[\w.{}-]{2,}")
_QUOTE_CHARS = "\"'`\u201c\u201d\u201e\u2018\u2019\u00ab\u00bb"
_END = Lazy(r"[.,;:!?]+$")
_EXPLAIN_ASKS = frozenset({"how", "what", "wie", "was"})
_INTO_LANGUAGE = Lazy(r"\b(?:into|to|in|nach|ins)\s+(?:(?:modern|idiomatic|current|newer|"
                      r"plain|pure|modernes?|aktuelles?)\s+)?(?:"
                      + "|".join((*PROGRAMMING_LANGUAGES,
                                                                      GO_LANGUAGE))
                      + r")(?![\w+#])", re.IGNORECASE)
_LANGUAGES = r"(?:" + "|".join((*PROGRAMMING_LANGUAGES, GO_LANGUAGE, "shell", "sql", "powershell",
                                 *(re.escape(f) for f in FRAMEWORKS))) + ")"
_ARTEFACTS = r"(?:" + "|".join(CODE_ARTEFACTS) + r")(?:e?s)?"
_BETWEEN = (r"(?:[\s-]+(?!(?:and|or|is|are|was|the|a|an|in|of|to|for|with|und|oder|ist|der|"
            r"die|das|ein|eine|für|mit)\b)[\w.]+){0,2}")
"""Up to two words of substance between a language and a program's part ("a Go *flag* parser")."""
_ARTEFACT = Lazy(rf"(?<![\w-]){_LANGUAGES}{_BETWEEN}[\s-]+{_ARTEFACTS}(?![\w-])"
                 rf"|(?<![\w-]){_ARTEFACTS}\s+in\s+{_LANGUAGES}(?![\w+#-])", re.IGNORECASE,
                 needs=CODE_ARTEFACTS)
LANGUAGES = ("english", "german", "french", "spanish", "italian", "portuguese", "dutch",
             "polish", "russian", "chinese", "japanese", "korean", "arabic", "turkish", "greek",
             "swedish", "danish", "norwegian", "finnish", "czech", "hindi", "ukrainian")
"""Languages people write in: "this press release *in French*" asks for it in that language."""

_CODE_KIND = Lazy(r"(?<![\w-])(?:regex(?:es|ps?)?|regular\s+expressions?|one-liners?|"
                  r"oneliners?|regul(?:ärer?|äre[nm])\s+ausdr(?:uck|ücke)\w*)(?![\w-])",
                  re.IGNORECASE, needs=("reg", "liner"))
"""Kinds of code by their own name, with no language needed: a regular expression, a
one-liner ("fix this regex", "a bash one-liner")."""

_FASTER = Lazy(r"\b(?:make|mach\w*)\s+(?:it|this|that|them|es|das|ihn|sie|the\s+\w+|den\s+\w+|"
               r"die\s+\w+)\s+(?:run\s+)?(?:faster|quicker|more\s+efficient|more\s+readable|"
               r"cleaner|leaner|schneller|effizienter|lesbarer)\b|\bspeed\s+(?:it|this|that|\w+)\s+"
               r"up\b|\boptimi[sz]e\b|\boptimiere\w*\b|\bbeschleunige\w*\b", re.IGNORECASE,
               needs=("make", "mach", "speed", "optimi", "beschleunig"))
"""Making code faster, cleaner or easier to read is changing it ("make it faster, it's
O(n^2): …"): with code in the task it adds ``change``."""

_RENDER = frozenset({"render", "put", "redo"})
_IN_LANGUAGE = Lazy(r"\b(?:this|these|that|those)\b.*?\b(in)\s+(?:" + "|".join(LANGUAGES)
                    + r")\W*(?:please|pls|thanks)?\W*$", re.IGNORECASE, needs=LANGUAGES)
_OTHER_CODE = Lazy(r"\b(?:qr|promo|discount|voucher|coupon|gift|zip|postal|post|dress|area|"
                   r"country|morse|pin|access|tracking|booking|confirmation|activation|bar|"
                   r"rabatt|gutschein)[\s-]?(codes?)\b", re.IGNORECASE)
_PLAIN = Lazy(r"\b(?:into|to|in)\s+(?:plain|simple|everyday|layman['\u2019]?s|"
              r"einfache|einfaches|verständliche)\s+(?:english|language|terms|words|deutsch|"
              r"sprache|worte|wörter)\b", re.IGNORECASE)
_SELF = Lazy(r"(?:^|(?<=[.!?;\n]))\s*(?:I['\u2019]?m|I am|ich bin)\s+(?:an?\s+|eine?\s+)?"
             r"[\w-]+(?:\s+[\w-]+)" + f"{{0,{SELF_WORDS - 1}}}"
             + r"(?=\s*(?:[,.;:!?\n]|\s(?:and|but|und|aber)\b))", re.IGNORECASE,
             needs=("im", "i'm", "i\u2019m", "i am", "ich bin"))
_QUANTITY = Lazy(
    r"\b(?:how\s+(?:much|many|long|often|far|old)|wie\s+(?:viele?|lange|oft|weit|alt))\b",
    re.IGNORECASE)
_ASKS = Lazy(r"(^\s*|,\s*)(?:what(?:['\u2019]s|s)?|wats|which|how|was|welche[rsm]?|wie)\b",
             re.IGNORECASE)
_SCOPE = Lazy(r"\b(?:all|entire|whole|complete|full|every|alle[nms]?|ganze[nmrs]?|"
              r"gesamte[nmrs]?|komplette[nmrs]?|sämtliche[nmrs]?)\b", re.IGNORECASE)
_TARGET = Lazy(r"\b(?:to|onto|into|auf|nach)\b", re.IGNORECASE)
_DECISION = Lazy(
    r"^\W*(?:(?:so|and|but|also|ok|okay|hmm+|ehrlich gesagt)\W+)?"
    r"(?:should|shall|sollen|sollten|soll|sollte)\s+(?:i|we|our|my|ich|wir|unser\w*|mein\w*)\b"
    r"|\b(?:is|was|would|will)\s+(?:it|this|that)\s+(?:not\s+)?(?:be\s+)?(?:really\s+)?worth\b"
    r"|\b(?:lohnt|lohnen)\s+(?:es\s+)?sich\b|\bsich\s+lohnen\b"
    r"|\b(?:decide|choose|pick|torn)\s+between\b|\bdecide\s+(?:whether|if)\b"
    r"|\bentscheiden\s+(?:zwischen|ob)\b|\bentscheide\w*\s+(?:mich|uns)\s+(?:zwischen|ob)\b"
    r"|\bwhich\s+(?:one\s+)?(?:should|would)\s+(?:i|we|you)\b"
    r"|\bwhat\s+would\s+you\s+(?:do|recommend|suggest|advise|pick|choose)\b"
    r"|\bwas\s+(?:würdest|würden)\s+(?:du|sie)\s+(?:tun|machen|raten|empfehlen)\b"
    r"|\b(?:i\s+am|i['\u2019]m|we\s+are|we['\u2019]re)\s+considering\b"
    r"|\b(?:überlege|überlegen)\s*,?\s*ob\b",
    re.IGNORECASE, needs=("should", "shall", "soll", "worth", "lohn", "between", "decide",
                          "entscheid", "would", "würd", "considering", "überleg"))
_SOON = frozenset("today tonight tomorrow heute morgen".split())
_OWN = Lazy(r"\b(?:my|mine|mein\w*)\b", re.IGNORECASE)
_LIST_PIECE = re.compile(r"\w[\w'\u2019-]*|[,.;:!?\n]")
_CONJUNCTIONS = frozenset({"and", "or", "und", "oder"})
_LIVE_PHRASE = Lazy(r"\b(?:at the moment|so far|this (?:morning|afternoon|evening)|"
                    r"im moment|bis jetzt)\b", re.IGNORECASE)
_POSSESSIVE = Lazy(r"\b(?:my|our|mine|ours|mein\w*|unser\w*)\b", re.IGNORECASE)
_RECENT_PHRASE = Lazy(r"\b(?:(?:last|past|this) (?:night|week|month|quarter|year)|yesterday|"
                      r"gestern|(?:letzte[nrm]?|vorige[nrm]?|diese[nrm]?) (?:nacht|woche|monat|"
                      r"quartal|jahr))\b", re.IGNORECASE)
_NOW_PHRASE = Lazy(r"\b(?:right now|last night|at the moment|im moment|heute abend)\b",
                   re.IGNORECASE)
_OWN_STATE = Lazy(r"(?:how\s+(?:much|many)|wie\s+viele?|where|wo|did|has|have|hat|haben|"
                  r"what\s+(?:did|has|have)|(?:what|which|welche[nrs]?)(?:\s+\w+)?\s+"
                  r"(?:do|did|have|habe|hatte)\s+(?:i|ich)|wann\s+(?:habe|hatte)\s+ich)\b",
                  re.IGNORECASE)
_I_HAVE = Lazy(r"\b(?:do|did)\s+i\s+have\b|\bhave\s+i\b|\bdid\s+i\s+(?!not\b)\w+"
               r"|\b(?:habe|hab|hatte)\s+ich\b", re.IGNORECASE)
"""The person as the subject of a question about their own things: *do I have*, *have I*,
*did I* and a verb ("how much *did I spend*"), *habe ich*."""
_WRITTEN_TO = Lazy(r"\b(?:me|us|mir|uns)\b.*\b(?:wrote|written|replied|answered|texted|e?-?mailed"
              r"|called|messaged|sent|(?:zurück)?geschrieben|geantwortet|gemeldet|angerufen|"
              r"geschickt)\b|\b(?:repl(?:y|ied)|answer(?:ed)?|writ(?:e|ten)|wrote|text(?:ed)?|"
              r"e-?mail(?:ed)?|call(?:ed)?|messag(?:e|ed)|sen[dt])\s+(?:back\s+)?(?:to\s+)?"
              r"(?:me|us)\b", re.IGNORECASE)
"""The person as the one written to, in a question after what happened ("Hat *mir* Jana
schon *zurückgeschrieben*?", "Has the landlord *replied to me*?"): their own messages."""
_GENERAL = frozenset("should can could would need must soll sollte sollen kann muss".split())
_DEADLINE = Lazy(r"\b(?:by|until|till|before|bis)\s+(?:tonight|today|tomorrow|heute(?:\s+abend)?|"
                 r"morgen)\b", re.IGNORECASE, needs=("by", "until", "till", "before", "bis"))
_ASKED = Lazy(r"\b(?:tell me|let me know|sag mir|sagt mir)\s+(?:wh\w+|how|if|was|wo|wer|wann|"
              r"wie|ob)\b", re.IGNORECASE)

_GREETING = Lazy(
    r"^\s*(?:hi|hello|hey|hiya|howdy|greetings|yo|hallo|moin|servus|huhu|"
    r"good\s+(?:morning|afternoon|evening|day)|guten\s+(?:morgen|tag|abend))"
    r"(?:\s+(?:there|all|everyone|everybody|folks|team|guys|friend|vance|zusammen|ihr|du|"
    r"leute)|\s+(?-i:[A-ZÄÖÜ][a-zäöüß]+)(?=\s*[!,]))?(?:\s*[!,.:;)(\-\u2013\u2014]+[\s!,.:;)(\-\u2013\u2014]*|\s+(?=(?:please|pls|"
    r"can|could|would|will|i|we|bitte|kannst|könntest|würdest|ich|wir)\b))"
    r"(?:(?:how\s+are\s+you(?:\s+doing)?|how['\u2019]?s\s+it\s+going|what['\u2019]?s\s+up|"
    r"wie\s+geht['\u2019]?s|wie\s+geht\s+es\s+(?:dir|euch|ihnen))\W*)?", re.IGNORECASE)
_PLEASANTRY = Lazy(
    r"^\s*(?:(?:(?:i|we)\s+)?hope\s+(?:you|you['\u2019]re|u|all|everything|things|this|your|"
    r"y['\u2019]all)\b[^.!?\n]{0,40}?\b(?:well|good|fine|great|okay|nice|lovely|weekend|day|"
    r"week|holidays?)\b[^.!?\n]*|sorry\s+(?:to|for)\s+(?:bother(?:ing)?|trouble|disturb)\w*"
    r"(?:\s+you)?(?:\s+again)?|(?:ich\s+)?hoffe,?\s+(?:es\s+geht\s+(?:dir|euch|ihnen)|(?:du|ihr|"
    r"sie)\s+(?:hattest|hattet|hatten|habt|hast|seid|bist)|dir\s+geht|euch\s+geht|alles\s+ist)"
    r"\b[^.!?\n]{0,40}?\b(?:gut|schön\w*|angenehm\w*|wohl|erholsam\w*|bestens|super)\b"
    r"[^.!?\n]*|(?:entschuldige|entschuldigung|sorry)\s+(?:bitte\s+)?(?:für\s+)?die\s+"
    r"störung)\s*[.!,:)(]+\s*", re.IGNORECASE, needs=("hope", "sorry", "hoffe", "störung"))
"""A well-wish or an apology for the bother before the request ("Hope you're well!", "Sorry
to bother you again.", "Ich hoffe, es geht dir gut!"): framing, like a greeting."""
_FRAME = Lazy(
    r"^\s*(?:(?:i\s+)?hope\s+you\s+(?:can|could|will)|i\s+(?:was\s+wondering|wonder)\s+if\s+you"
    r"\s+(?:could|can|would)|(?:(?:would|do)\s+you\s+)?mind(?=\s+\w+ing\b)|would\s+you\s+be\s+so"
    r"\s+kind\s+as\s+to|i['\u2019]?d\s+(?:really\s+)?appreciate\s+it\s+if\s+you\s+(?:could|would"
    r"|can)|i\s+(?:would|['\u2019]d)\s+like\s+you\s+to|(?:(?:could|can)\s+you\s+)?do\s+me\s+a"
    r"\s+favou?r\s+and|if\s+(?:it['\u2019]?s|it\s+is)\s+not\s+too\s+much\s+(?:trouble|to\s+ask)"
    r"\s*,|(?:if|when)\s+you\s+(?:have|get)\s+a\s+(?:minute|moment|sec(?:ond)?)\s*,|(?:wärst|"
    r"wären|wäret|bist|seid)\s+(?:du|sie|ihr)\s+so\s+(?:lieb|nett|gut|freundlich)(?:\s+und)?|sei"
    r"\s+so\s+(?:lieb|nett|gut)\s+und|tu\s+mir\s+(?:bitte\s+)?(?:einen|den)\s+gefallen\s+und|"
    r"(?:ich\s+)?hoffe,?\s+(?:du\s+kannst|sie\s+können|ihr\s+könnt))\s+", re.IGNORECASE,
    needs=("hope", "wonder", "mind", "kind", "appreciate", "like you", "favo", "trouble",
           "too much", "minute", "moment", "sec", "so lieb", "so nett", "so gut",
           "so freundlich", "gefallen", "hoffe"))
"""A polite frame around the request ("I was wondering if you could *write* …", "Would you
mind *drafting* …", "Wärst du so lieb und *schreibst* …"): its verb is the predicate."""
_THANKS = Lazy(
    r"(?:(?<=[.!?,;:])|^|\s)\s*(?:thanks|thank\s+you|thx|ty|cheers|danke|vielen\s+dank|merci)"
    r"(?:\s+(?:a\s+lot|so\s+much|very\s+much|in\s+advance|schön|sehr|im\s+voraus))?"
    r"[\s.!:)(]*$", re.IGNORECASE, needs=("than", "thx", "ty", "cheers", "dank", "merci"))
_CAUSE = Lazy(
    r"\b(?:what(?:['\u2019]s|\s+is)\s+(?:going\s+on|wrong|behind\s+(?:it|this|that))"
    r"|what\s+(?:happened|went\s+wrong|caused\s+(?:it|this|that)|explains\s+(?:it|this|that))"
    r"|was\s+ist\s+(?:da\s+|denn\s+)?(?:los|passiert)|woran\s+liegt\s+(?:das|es))\b",
    re.IGNORECASE, needs=("what", "was ", "woran"))

_SAYS = Lazy(r"^\W*(?:what\s+(?:does|do|did)\b[^?.!]*\b(?:say|says|mean|means)\b"
             r"|was\s+(?:sagt|bedeutet|heißt)\b)", re.IGNORECASE)
"""A question what a text says or means ("What does this clause say, in short?"): its
numbers are the text's, not data to compute with."""

_VERSION = Lazy(r"(?<![\w-])(" + "|".join((*PROGRAMMING_LANGUAGES, "node", "php", "java"))
                + r")[\s-]?(\d+(?:\.\d+)*)(?![\w.])", re.IGNORECASE,
                needs=("python", "java", "node", "php", "ruby", "perl", "swift", "kotlin", "scala",
                       "rust", "go", "c", "dart", "lua", "julia", "elixir", "typescript"))
_REMEDY = Lazy(r"\bhow\s+(?:do|can|should|could)\s+(?:i|we)\s+(?:fix|solve|resolve|get\s+rid\s+of|"
               r"make\s+it\s+(?:go\s+away|stop|work)|stop|avoid|prevent|get\s+past)\b"
               r"|\bwie\s+(?:bekomme|kriege|werde)\s+ich\b.*\b(?:weg|los)\b", re.IGNORECASE,
               needs=("how", "wie"))
"""A how-question after a remedy ("how do I make it go away?"): it asks for a fix."""

READINGS_KEPT = 16
"""Readings kept in memory: the ranking and the offline selector read the same task
one after the other; a task read is at most ``lexicon.ANALYSED_CHARS`` long."""

Rewrite = Callable[[str], tuple[str, int]]
"""A rule applied to one sentence: (the sentence as read, how many times it applied)."""


@frozen
class Reading:
    """A task as the ranking reads it.

    Attributes:
        text: the task, material blanked out and shapes put into words.
        extra: words the task shows without a place in it (``perspectives``,
            ``calculate``); content words, never head words.
        notes: what was read, for the rationale ("code as 'code'", …).
        given: the task holds material (quoted, pasted or after a colon, ``material.request``).
    """

    text: str
    extra: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    given: bool = False


@lru_cache(maxsize=READINGS_KEPT)
def read(task: str) -> Reading:
    """Read ``task`` by the rules of the module docstring.

    Args:
        task: the task text (the part the lexical analysis reads).

    Returns:
        The reading: the rewritten text, the added words and notes.
    """
    notes: list[str] = []
    extra: list[str] = []
    text = request(task)
    given = text != task
    if given:
        notes.append("quoted or pasted material left out")
    text = _courtesy(text, notes)
    if pasted_code(task):
        extra.append("code")
        text, explained = _explain_first(text)
        notes.append("pasted code as 'code'" + (", its question as 'explain'" if explained
                                                else ""))
    if any(w.casefold() in _VERB_SLIPS for w in _WORD.findall(text)):
        text = _WORD.sub(_writing_slip, text)
        notes.append("a slip of a writing verb as that verb")
    selves = 0
    if _SELF.may_match(text):
        text, selves = _SELF.re.subn(lambda m: " " * len(m.group()), text)
    if selves:
        notes.append("who is asking left out")
    for rewrite, note in ((_measures, "measures as numbers"),
                          (_versions, "a language with its version as 'code', two as 'port'"),
                          (_other_code, "a code of no program"),
                          (_code, "code as 'code'"),
                          (_port, "translating into a programming language as 'port'"),
                          (_in_language, "a given text in another language as 'into'"),
                          (_plain, "translating into plain words as 'explain'")):
        text, count = _each_sentence(text, rewrite)
        if count:
            notes.append(note)
    if ("code" in extra or any(n.startswith("code as") for n in notes)) and (
            _FASTER.may_match(text) and _FASTER.re.search(text) is not None):
        extra.append("change")
        notes.append("making code faster or cleaner adds 'change'")
    text, decisions = _each_sentence(text, _decision)
    if decisions:
        notes.append("a decision question as 'weigh'")
    if len(_DIGITS.findall(text)) >= GIVEN_NUMBERS:
        text, asked = _each_sentence(text, _calculate)
        notes.append("a question about given numbers as 'calculate'" if asked
                     else "given numbers add 'calculate'")
        extra += [] if asked else ["calculate"]
    text, moves = _each_sentence(text, _scale)
    if moves:
        extra.append("subtasks")
        notes.append("moving a whole system as 'migration' with 'subtasks'")
    if role_list(text):
        opinion = not OPINION_WORDS.isdisjoint(w.casefold() for w in _WORD.findall(text))
        extra += ["perspectives", "roles"] if opinion else ["perspectives"]
        notes.append("a list of roles adds " + ("'perspectives', 'roles'" if opinion
                                                 else "'perspectives'"))
    return Reading(text, tuple(extra), tuple(notes), given)


def _courtesy(text: str, notes: list[str]) -> str:
    """Leave out the framing of a request; read a cause question.

    A greeting, a pleasantry and a polite frame before the request ("Hi there!
    Could you …", "Hope you're well! …", "I was wondering if you could …")
    and thanks after it ("… Thanks!") frame it; "what's going on", "was ist
    los" … ask why (``_CAUSE``). What was read is added to ``notes``.
    """
    greeted = _GREETING.re.match(text)
    if greeted is not None and greeted.end() and greeted.end() < len(text.rstrip()):
        text = " " * greeted.end() + text[greeted.end():]
        notes.append("the greeting left out")
    if _PLEASANTRY.may_match(text):
        wished = _PLEASANTRY.re.match(text)
        if wished is not None and wished.end() < len(text.rstrip()):
            text = " " * wished.end() + text[wished.end():]
            notes.append("the pleasantry left out")
    if _FRAME.may_match(text):
        framed = _FRAME.re.match(text)
        if framed is not None and framed.end() < len(text.rstrip()):
            rest = text[framed.end():]
            verb = _WORD.match(rest)
            if verb is not None and verb.group().casefold().endswith("ing"):
                base = verb.group()[:-3]  # "mind *drafting*": the gerund is the verb
                base = next((b for b in (base, base + "e") if b.casefold() in WRITING_VERBS), "")
                rest = (base + " " * 3 + rest[verb.end():]) if base else rest
            text = " " * framed.end() + rest
            notes.append("the polite frame left out")
    if _THANKS.may_match(text):
        thanked = _THANKS.re.search(text)
        if thanked is not None and thanked.start() > 0:
            text = text[:thanked.start()] + " " * (len(text) - thanked.start())
    if _CAUSE.may_match(text):
        text, causes = _CAUSE.re.subn("why", text)
        if causes:
            notes.append("a question after causes as 'why'")
    return text


def _swaps(word: str) -> Iterator[str]:
    """Yield ``word`` with two neighbouring letters swapped, the first letter kept."""
    for i in range(1, len(word) - 1):
        if word[i] != word[i + 1]:
            yield word[:i] + word[i + 1] + word[i] + word[i + 2:]


_VERB_SLIPS = {slip: verb for verb in sorted(WRITING_VERBS) for slip in _swaps(verb)
               if slip not in WRITING_VERBS | {"schrieb", "schriebe", "schrieben"}}
"""Each writing verb with two neighbouring letters swapped → the verb (not the past tense of
*schreiben*, a real word)."""


def _writing_slip(found: re.Match[str]) -> str:
    meant = _VERB_SLIPS.get(found.group().casefold())
    return found.group() if meant is None else meant


def _each_sentence(text: str, rewrite: Rewrite) -> tuple[str, int]:
    """Apply ``rewrite`` to each sentence of ``text``; return the text and the count."""
    total = 0
    parts = []
    for sentence in _SENTENCE.findall(text):
        done, count = rewrite(sentence)
        parts.append(done)
        total += count
    return "".join(parts), total


def _other_code(sentence: str) -> tuple[str, int]:
    """Leave out *code* where it names no program: a QR code, a promo code, a dress code."""
    if "ode" not in sentence:
        return sentence, 0
    return _OTHER_CODE.re.subn(lambda m: m.group()[:m.start(1) - m.start()], sentence)


def _versions(sentence: str) -> tuple[str, int]:
    """Read a programming language with a version as ``code``; two versions of one as a port.

    "Move my Python 2.7 scraper to Python 3.12": the numbers name versions, not data to
    compute with, and going from one to the other is a port.
    """
    if not any(c.isdigit() for c in sentence) or not _VERSION.may_match(sentence):
        return sentence, 0
    found = _VERSION.re.findall(sentence)
    if not found:
        return sentence, 0
    done = _VERSION.re.sub("code", sentence)
    languages = [language.casefold() for language, _number in found]
    if len(found) >= 2 and len(set(languages)) < len(languages) and len(set(found)) > 1:
        done = _opened(done, "port")
    return done, len(found)


def _measures(sentence: str) -> tuple[str, int]:
    if "-" not in sentence:
        return sentence, 0
    return _MEASURE.re.subn(lambda m: m.group(1), sentence)


def is_code(token: str) -> bool:
    """True for a piece of a task that names code: a source file, a path, a call, an identifier.

    An identifier is written as code writes names: camelCase (``useEffect``,
    ``handleSubmit``: two lower-case letters or more before the first
    capital, so ``iPhone`` and ``eBay`` are names of things) or snake_case
    (``parse_date``, ``__init__``). PascalCase is left out: ``LinkedIn``,
    ``YouTube`` and ``PowerPoint`` are written so.

    Args:
        token: one white-space separated piece of the task; quotes,
            brackets and punctuation around it are allowed.
    """
    bare = token.strip(_QUOTE_CHARS + ",;:!?")
    word = bare.strip("()[]{}<>.")
    if word.casefold() in BUILD_FILES:
        return True
    if ("_" in word or not word.islower()) and _IDENTIFIER.re.fullmatch(word):
        return True  # (an identifier has an underscore or a capital: most words compile nothing)
    if not ("/" in word or "(" in bare or "." in word) or "://" in word or word.startswith("www."):
        return False
    if _CALL.re.match(bare.rstrip(".")):
        return True
    source = _SOURCE_FILE.re.match(word)
    if source is not None and source.group(1) in SOURCE_EXTENSIONS:
        return True
    parts = [part for part in word.split("/") if part]
    return ("/" in word and any(c.isalpha() for c in word)
            and all(_PATH_PART.re.fullmatch(part) for part in parts)
            and (word.startswith("/") or word.endswith("/") or len(parts) >= 3))


def _code(sentence: str) -> tuple[str, int]:
    """Read code names and programs as ``code``; a how/what question about them gets ``explain``."""
    count = 0

    def name(found: re.Match[str]) -> str:
        nonlocal count
        if not is_code(found.group()):
            return found.group()
        count += 1
        end = _END.re.search(found.group())
        return "code" + (end.group() if end else "")

    programs = 0
    if _ARTEFACT.may_match(sentence):
        sentence, programs = _ARTEFACT.re.subn("code", sentence)
    if _CODE_KIND.may_match(sentence):
        sentence, kinds = _CODE_KIND.re.subn("code", sentence)
        programs += kinds
    sentence = _TOKEN.sub(name, sentence)
    count += programs
    if count and _REMEDY.may_match(sentence) and _REMEDY.re.search(sentence):
        return _opened(sentence, "fix"), count  # "how do I make it go away?" asks for a fix
    if (count and not _EXPLAIN_ASKS.isdisjoint(w.casefold() for w in _WORD.findall(sentence))
            and not sentence.lstrip().startswith("explain ")):
        sentence = _opened(sentence, "explain")
    return sentence, count


def _opened(sentence: str, word: str) -> str:
    """Return ``sentence`` opened by ``word``, the white space before it kept."""
    body = sentence.lstrip()
    return sentence[:len(sentence) - len(body)] + word + " " + body


def _explain_first(text: str) -> tuple[str, bool]:
    """Open the first sentence of ``text`` that asks *how* or *what* with ``explain``."""
    parts = _SENTENCE.findall(text)
    for i, sentence in enumerate(parts):
        if not _EXPLAIN_ASKS.isdisjoint(w.casefold() for w in _WORD.findall(sentence)):
            parts[i] = _opened(sentence, "explain")
            return "".join(parts), True
    return text, False


def _verb(sentence: str, verbs: frozenset[str]) -> re.Match[str] | None:
    return next((m for m in _WORD.finditer(sentence) if m.group().casefold() in verbs), None)


def _port(sentence: str) -> tuple[str, int]:
    verb = _verb(sentence, TRANSLATE_VERBS)
    if verb is None or not _INTO_LANGUAGE.re.search(sentence):
        return sentence, 0
    return sentence[:verb.start()] + "port" + sentence[verb.end():], 1


def _plain(sentence: str) -> tuple[str, int]:
    verb = _verb(sentence, TRANSLATE_VERBS)
    if verb is None or not _PLAIN.re.search(sentence):
        return sentence, 0
    return sentence[:verb.start()] + "explain" + sentence[verb.end():], 1


def _in_language(sentence: str) -> tuple[str, int]:
    found = _IN_LANGUAGE.re.search(sentence) if _IN_LANGUAGE.may_match(sentence) else None
    if found is None:
        return sentence, 0
    before = _WORD.findall(sentence[:found.start()].casefold())
    if any(is_content(w) and w not in _RENDER for w in before):
        return sentence, 0  # another request: "Explain this concept in German"
    return sentence[:found.start(1)] + "into" + sentence[found.end(1):], 1


def plain_words(text: str) -> str:
    """Return ``text`` with each translating into plain words read as ``explain`` (see above)."""
    return _each_sentence(text, _plain)[0]


def _calculate(sentence: str) -> tuple[str, int]:
    """Read the question about given numbers as ``calculate`` (a question opens a clause).

    A *how much*/*how many* question anywhere; a *what*/*which*/*how* question
    that ends with ``?`` or opens its sentence ("whats the end value if …").
    """
    if sentence.lstrip().startswith("weigh ") or _SAYS.re.match(sentence):
        return sentence, 0  # a decision question, weighed; what a text says, read
    sentence, count = _QUANTITY.re.subn("; calculate", sentence)
    if count or not (sentence.rstrip().endswith("?") or _ASKS.re.match(sentence)):
        return sentence, count
    return _ASKS.re.subn(lambda m: "; calculate" if "," in m.group(1) else m.group(1) + "calculate",
                      sentence, count=1)


def _decision(sentence: str) -> tuple[str, int]:
    """Open a question about which way to decide with ``weigh`` (see the module docstring)."""
    if not _DECISION.may_match(sentence) or _DECISION.re.search(sentence) is None:
        return sentence, 0
    words = {w.casefold() for w in _WORD.findall(sentence)}
    if not _SOON.isdisjoint(words):
        return sentence, 0
    return _opened(sentence, "weigh"), 1


def _scale(sentence: str) -> tuple[str, int]:
    verb = _verb(sentence, MOVE_VERBS)
    if (verb is None or not _SCOPE.re.search(sentence) or not _TARGET.re.search(sentence)
            or _OWN.re.search(sentence)):
        return sentence, 0
    return sentence[:verb.start()] + "migration" + sentence[verb.end():], 1


def role_list(text: str) -> bool:
    """True when ``text`` lists ``ROLES`` or more items, each a determiner and a few words.

    Items are separated by commas, the last joined by *and*/*or*/*und*/*oder*;
    each is one determiner (``DETERMINERS``) and 1 to ``ROLE_WORDS`` more
    words ("a CFO, a head of sales and a customer success lead"). One pass
    over the words.

    Args:
        text: the task text.
    """
    items = 0          # items of the list so far
    size = -1          # words of the open item after its determiner; -1: no item open
    after = False      # right after a separator: the next determiner opens the next item
    joined = False     # the open item follows "and"/"or": it may end the list
    for piece in _LIST_PIECE.findall(text):
        low = piece.casefold()
        if low in DETERMINERS and (after or size < 0):
            items, size, after = (items + 1 if after else 1), 0, False
        elif piece == "," and size >= 1:
            size, after, joined = -1, True, False
        elif low in _CONJUNCTIONS and (size >= 1 or after):  # "…, and a lawyer"
            size, after, joined = -1, True, True
        elif size >= 0 and piece[0].isalnum():
            size += low not in DETERMINERS  # "a head of *the* sales team"
            if size > ROLE_WORDS:
                items, size, joined = 0, -1, False
            elif joined and items >= ROLES:
                return True
        else:
            items, size, after, joined = 0, -1, False, False
    return False


def action_request(text: str) -> str | None:
    """Return the verb when the task asks for an act in the world, or None.

    The act is the request's predicate: its first word (after *please*,
    *can you*, *bitte*, *kannst du* …) or, in German, its last word before
    the sentence end ("Kannst du … *abschicken*?") is one of
    ``ACTION_VERBS``: ordering, booking, paying, sending, calling, reminding …
    "Send me …" is no act: it asks for something to be handed over, as
    "give me" does.

    Args:
        text: the task text, its material left out (``material.request``).
    """
    first: str = next((s for s in _SENTENCE.findall(text.strip()) if s.strip()), "")
    words: list[str] = [w.casefold() for w in _WORD.findall(first)]
    while words and words[0] in _POLITE:
        words = words[1:]
    if not words:
        return None
    handed = words[0] in _HAND_OVER and len(words) > 1 and words[1] in _TO_ME  # "Send me …"
    if words[0] in ACTION_VERBS and not handed:
        return words[0]
    return words[-1] if words[-1] in GERMAN_ACTION_INFINITIVES else None


INTERROGATIVE_VERBS = frozenset("""
is are was were does did has can could will would isn aren wasn doesn didn hasn
ist sind war waren hat haben hatte gibt gab kann können wird werden kommt kommen
""".split())
"""Verbs that open a question when they open the sentence (the verb before the subject:
"*Is* Pluto a planet", "*Hat* mein Vermieter …", "*Gibt* es …"). Not *do* or *have*, which
open requests too ("*Do* a code review", "*Have* a look at this")."""


def asks(sentence: str) -> bool:
    """True when ``sentence`` is put as a question: by its ``?`` or by its word order.

    Its first word is a question word (*who*, *what*, *wann* …, ``_WH_WORDS``)
    or a verb before its subject (``INTERROGATIVE_VERBS``): "how many vacation
    days do I have left", "wie hoch ist die Zugspitze", "did my parcel arrive".
    *Can*/*could*/*would*/*kannst* … with *you*/*du* ask for something to be
    done ("Can you translate this") and are no question about the world.

    Args:
        sentence: one sentence of a task.
    """
    if sentence.rstrip().endswith("?"):
        return True
    words = [w.casefold() for w in _WORD.findall(sentence)][:2]
    if not words:
        return False
    if _wh(words[0], sentence):
        return True
    return (words[0] in INTERROGATIVE_VERBS and not (len(words) > 1 and words[1] in _YOU))


def _wh(word: str, sentence: str) -> bool:
    """True when ``word`` (case-folded) is a question word; *was* only in German."""
    return word in _WH_WORDS and not (word == "was" and language(sentence) == "en")


def _named_subject(sentence: str) -> bool:
    """True when the word after the sentence's first is written as a name ("Is *Pluto* …")."""
    found = _WORD.findall(sentence)
    return len(found) > 1 and found[1][:1].isupper()


_YOU = frozenset({"you", "u", "ya", "du", "ihr", "sie"})
_WHEN = Lazy(r"^\W*(?:when|what\s+time|how\s+long\s+(?:until|till|before)|wann|"
             r"um\s+wie\s+viel\s+uhr|wie\s+lange\s+(?:noch|bis))\b", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    """Return the sentences of ``text`` (the split every rule here uses), in order."""
    return _SENTENCE.findall(text)


def fact_question(text: str) -> bool:
    """True when the task is one short direct question about the world: it asks for one fact.

    "What's the boiling point of water at sea level?", "whats the difference
    between a noun and a pronoun, in one line": a single sentence of at most
    ``FACT_WORDS`` words, opened by a question word (``QUESTION_OPENERS``),
    ending with ``?`` unless it opens with a *wh*-word; nothing of the
    person's own (*my*, *our* …: only their data holds that), nothing to come
    (*tomorrow*, *next* …: a forecast or a plan) and no given numbers (a
    calculation). Answering it needs no material and no research.

    Args:
        text: the task text, its material left out (``material.request``).
    """
    sentences = [s for s in _SENTENCE.findall(text.strip()) if s.strip()]
    words = [w.casefold() for w in _WORD.findall(text)]
    if len(sentences) != 1 or not words or len(words) > FACT_WORDS:
        return False
    # without "?", a question opened by a verb asks a fact only about something named
    # ("Is Pluto a planet"): "did the package arrive" asks about the person's own things
    asked = sentences[0].rstrip().endswith("?") or _wh(words[0], text) or (
        asks(sentences[0]) and _named_subject(sentences[0]))
    opened = words[0] in QUESTION_OPENERS or (words[0] in INTERROGATIVE_VERBS
                                              and (len(words) < 2 or words[1] not in _YOU))
    return (asked and opened and _POSSESSIVE.re.search(text) is None
            and FUTURE_WORDS.isdisjoint(words) and len(_DIGITS.findall(text)) < GIVEN_NUMBERS)


def live_question(text: str) -> str | None:
    """Say whose live data the task asks for, when it is one question no recipe can answer.

    Two kinds, each a single sentence without given numbers (those make it a
    calculation):

    - about the person's own data as it is now or was lately: a question
      ending with ``?`` or an asked one ("… and *tell me where* it is",
      "*sag mir, ob* …"), with a first-person possessive (*my*, *our*, *mein*,
      *unser* …) and a word of the present moment (``LIVE_WORDS``, "at the
      moment", "so far" …) or the recent past ("last month", "yesterday" …):
      "Where's my Amazon package right now?", "What's my current account
      balance?" — answering needs live access to their accounts or devices;
    - about the state of the person's own things or what happened to them:
      one short question (at most ``FACT_WORDS`` words) opened by *how
      much*, *how many*, *where*, *did*, *has*, *have*, *wie viele*, *wo* …
      with *my*/*our* or *do I have*/*habe ich*, and no modal of a general
      question (*should*, *can*, *need* …): "How much money is in my
      savings account?", "Did my transfer to Anna go through?", "Wie viele
      Urlaubstage habe ich noch übrig?";
    - about the world at this moment: a direct question (``QUESTION_OPENERS``,
      ending with ``?``) with an adverb of now or the day just gone
      (``NOW_WORDS``, "right now", "last night" …): "Who won last night's
      match?", "Is the train on time today?" — the local engine has no live
      web access.

    A deadline is no time asked about: "… by tonight", "bis heute Abend".

    Args:
        text: the task text, its material left out (``material.request``).

    Returns:
        ``"own"`` or ``"world"`` (the kind above), or None.
    """
    sentences = _without_follow_up([s for s in _SENTENCE.findall(text.strip()) if s.strip()])
    if len(sentences) != 1 or len(_DIGITS.findall(text)) >= GIVEN_NUMBERS:
        return None
    text = sentences[0]
    if _DEADLINE.may_match(text):
        text = _DEADLINE.re.sub(" ", text)
    words = [w.casefold() for w in _WORD.findall(text)]
    question = asks(sentences[0])
    # each test only when the answer still depends on it: most tasks ask no question, and
    # the phrase patterns are compiled on first use
    own = _POSSESSIVE.re.search(text) is not None
    if (own and (question or _ASKED.re.search(text) is not None)
            and (not LIVE_WORDS.isdisjoint(words) or _LIVE_PHRASE.re.search(text) is not None
                 or _RECENT_PHRASE.re.search(text) is not None)):
        return "own"
    if (question and own and len(words) <= FACT_WORDS and _GENERAL.isdisjoint(words)
            and _WHEN.re.match(text) is not None):
        return "own"  # one's own events to come: "When is my next dentist appointment?"
    subject = (_I_HAVE.re.search(text) is not None  # "which meetings do I have next week"
               or (question and _WRITTEN_TO.re.search(text) is not None))
    if (question and (own or subject) and len(words) <= FACT_WORDS
            and (subject or FUTURE_WORDS.isdisjoint(words))
            and _GENERAL.isdisjoint(words) and _OWN_STATE.re.match(text.strip()) is not None):
        return "own"
    if question and words and words[0] in QUESTION_OPENERS and (
            not NOW_WORDS.isdisjoint(words) or _NOW_PHRASE.re.search(text) is not None):
        return "world"
    return None


FOLLOW_UP_WORDS = 2
"""Most words of a sentence after a question that only says what to do with its answer
("… ausgegeben? *Bitte berechnen.*", "… this year? *Please compute.*"): no second request."""


def _without_follow_up(sentences: list[str]) -> list[str]:
    """Return ``sentences`` without the short follow-ups after the first (``FOLLOW_UP_WORDS``)."""
    while len(sentences) > 1 and len(_WORD.findall(sentences[-1])) <= FOLLOW_UP_WORDS:
        sentences = sentences[:-1]
    return sentences


OWN_STORES = frozenset("""
inbox mailbox emails e-mails mails chats whatsapp messages sms voicemail voicemails calendar
account accounts tracker smartwatch photos gallery contacts bank banking transactions purchases
posteingang postfach nachrichten sprachnachricht sprachnachrichten kalender termine konto
girokonto kontoauszug kontoauszüge umsätze fotos kontakte
""".split())
"""Where a person's own data lives — mail, messages, calendar, accounts, devices and their
apps (the kinds of personal information services): "summarise *my chats*", "… *from my
fitness tracker*", "*laut meinem Konto*". German compounds count by their head
("Sprach*nachricht*", "Fitness*tracker*")."""

_OWNED = Lazy(r"\b(?:my|our|mein\w*|unser\w*)\b((?:\s+[\w-]+){1,3})", re.IGNORECASE)
_RECEIVED = Lazy(r"\b(?:sent|forwarded|texted|mailed)\s+(?:to\s+)?(?:me|us)\b|\b(?:mir|uns)\b"
                 r"[^.!?]{0,40}?\b(?:geschickt|gesendet|geschrieben|weitergeleitet)\b",
                 re.IGNORECASE, needs=("sent", "forward", "texted", "mailed", "mir", "uns"))
RECEIVED_THINGS = frozenset("""
email e-mail mail message text letter memo note file document attachment pdf report link
nachricht brief datei dokument anhang bericht
""".split())
"""What is sent to a person: a sentence that says one was sent to them ("the *email* my
boss *sent me*", "die *Datei*, die *mir* Jan geschickt hat") names their own data, as a
store word of ``OWN_STORES`` does after *my*."""
_STORE_WORD = re.compile(r"[\w-]+")
_HOW_WHY = Lazy(r"\b(?:how|wie)\b(?!\s+(?:much|many|often|long|viele?|oft|lange)\b)"
                r"|\b(?:why|warum|wieso)\b", re.IGNORECASE)


def _store(word: str) -> bool:
    """True when ``word`` (case-folded) is one of ``OWN_STORES``, or a compound ending in one."""
    return word in OWN_STORES or any(word.endswith(store) and len(word) > len(store) + 2
                                     for store in OWN_STORES if len(store) >= 5)


def own_source(text: str, given: bool) -> str | None:
    """Return the word of the person's own data store the request works on, or None.

    The request names its material as the person's own mail, messages, calendar,
    account or device (``OWN_STORES`` after *my*/*mein* …, or a store word in a
    sentence that says it was sent to them: "the voice message Giulia *sent me*",
    "die Sprachnachricht, die *mir* Giulia geschickt hat") and gives none of it
    (``given``: the task holds quoted or pasted material). Reaching it needs access
    to their accounts or devices, which no recipe has. A piece of writing about it
    ("Draft a reply to the message my boss sent me") is the writer's, not this rule's, and
    a question how or why ("Explain how my calendar app syncs") asks about no data.

    Args:
        text: the task as read (its material left out).
        given: the task gives material (quoted, pasted or after a colon).
    """
    if (given or ":" in text or writing_job(text) is not None
            or _HOW_WHY.re.search(text) is not None):
        return None  # material given, a piece of writing, or a question how something works
    for found in _OWNED.re.finditer(text):
        words: list[str] = _STORE_WORD.findall(found.group(1))
        store = next((w.casefold() for w in words if _store(w.casefold())), None)
        if store is not None:
            return store
    if _RECEIVED.may_match(text) and _RECEIVED.re.search(text) is not None:
        for sentence in _SENTENCE.findall(text):
            if _RECEIVED.re.search(sentence) is not None:
                return next((w.casefold() for w in _STORE_WORD.findall(sentence)
                             if _store(w.casefold()) or w.casefold() in RECEIVED_THINGS), None)
    return None
