"""reading: the shapes of a task read as words — measures, code, ports, numbers, scale, roles."""

from __future__ import annotations

import pytest

from vance_cli.ranking.reading import (
    action_request,
    fact_question,
    is_code,
    live_question,
    read,
    role_list,
)


@pytest.mark.parametrize(("task", "text"), [
    ("Write a two-minute wedding toast", "Write a two wedding toast"),
    ("Write an 80-word product description", "Write an 80 product description"),
    ("Die 4-Tage-Woche einführen", "Die 4 einführen"),
    ("Fix the UTC-5 offset", "Fix the UTC-5 offset"),            # no number before the hyphen
    ("minutes_2024-03-12.pdf", "minutes_2024-03-12.pdf"),        # digits after: a date
])
def test_a_measure_reads_as_its_number(task: str, text: str) -> None:
    assert read(task).text == text


@pytest.mark.parametrize(("token", "code"), [
    ("src/auth/middleware.py", True),
    ("tools/rotate_logs.pl", True),
    ("(services/billing/)", True),                 # a folder path
    ("/api/v1/invoices/{id}/void", True),
    ("calculate_vat()", True),                      # a call
    ("get_user(id):", True),
    ("validators.js,", True),
    ("reports/Q3_2024.pdf", False),                 # a document, not code
    ("strings.en.json", False),                     # data: may be strings to translate
    ("and/or", False),
    ("w/", False),
    ("24/7", False),
    ("https://example.com/a/b/c", False),           # an address
    ("f(x)", False),                                # mathematics
    ("e.g.", False),
    # identifiers as code writes them
    ("useEffect", True),
    ("`handleSubmit`", True),
    ("parse_date", True),
    ("__init__", True),
    ("iPhone", False),                              # names of things
    ("eBay", False),
    ("macOS", False),
    ("LinkedIn", False),
    ("YouTube", False),
])
def test_code_names(token: str, code: bool) -> None:
    assert is_code(token) is code


@pytest.mark.parametrize(("task", "text"), [
    ("Create a QR code for our menu", "Create a QR  for our menu"),
    ("Erstelle einen QR-Code für die Speisekarte", "Erstelle einen QR- für die Speisekarte"),
    ("What's the dress code?", "What's the dress ?"),
    ("Review the code in app.py", "Review the code in code"),           # code of a program
])
def test_a_code_of_no_program_is_left_out(task: str, text: str) -> None:
    assert read(task).text == text


@pytest.mark.parametrize(("task", "text"), [
    ("Port tools/rotate_logs.pl to Python 3.", "Port code to Python 3."),
    ("What does src/auth/middleware.py do?", "explain What does code do?"),
    ("i dont get this regex in validators.js, what is it doing",
     "explain i dont get this code in code, what is it doing"),  # a regex is code
    ("Fix the bug in app/models.py.", "Fix the bug in code."),      # no question: no 'explain'
])
def test_code_reads_as_code_and_a_question_about_it_as_explain(task: str, text: str) -> None:
    assert read(task).text == text


@pytest.mark.parametrize(("task", "text", "note"), [
    ("What does this bash script do, line by line?\nfor f in *.csv; do\n  cat \"$f\"\ndone",
     "explain What does this code do, line by line?",
     "its question as 'explain'"),
    ("this crashes when the list is empty, pls fix:\ndef avg(xs):\n    return sum(xs) / len(xs)",
     "this crashes when the list is empty, pls fix:", "pasted code as 'code'"),
])
def test_pasted_code_adds_code_and_its_question_reads_as_explain(task: str, text: str,
                                                                  note: str) -> None:
    found = read(task)
    assert " ".join(found.text.split()) == " ".join(text.split()) and found.extra == ("code",)
    assert any(note in n for n in found.notes)


@pytest.mark.parametrize(("task", "text"), [
    ("wirte a polite msg to my neighbour", "write a polite msg to my neighbour"),
    ("Pls darft an email to HR", "Pls draft an email to HR"),
    ("Schreib mir, was er schrieb", "Schreib mir, was er schrieb"),   # a real word stays
    ("Wirte the report", "write the report"),
])
def test_a_writing_verb_typed_with_two_letters_swapped_reads_as_the_verb(task: str,
                                                                          text: str) -> None:
    assert read(task).text == text


@pytest.mark.parametrize(("task", "text"), [
    ("Write a bash script that backs up my photos", "Write a code that backs up my photos"),
    ("Schreib ein Python-Skript, das CSV-Dateien liest", "Schreib ein code, das CSV-Dateien liest"),
    ("Give me a SQL query for the top customers", "Give me a code for the top customers"),
    ("I need a parser in Rust", "I need a code"),
    ("Add a dark mode toggle to our React app", "Add a dark mode toggle to our code"),
    ("i inherited this django project", "i inherited this code"),
    ("Plant the spring flowers", "Plant the spring flowers"),
    ("Write a small Go flag parser for our CLI", "Write a small code for our CLI"),  # Go, words
    ("Rewrite our checkout service in Go", "Rewrite our checkout code"),
    ("I'm ready to go with the scripts", "I'm ready to go with the scripts"),      # go: a verb
    ("Write a poem about Python and its scripts", "Write a poem about Python and its scripts"),
    ("What does this bash script do?", "explain What does this code do?"),
    ("Write a script for our launch video", "Write a script for our launch video"),   # a video's
    ("Write a poem about Python", "Write a poem about Python"),
])
def test_a_program_in_a_programming_language_reads_as_code(task: str, text: str) -> None:
    assert read(task).text == text


@pytest.mark.parametrize(("task", "text"), [
    ("Render this press release in French", "Render this press release into French"),
    ("I need this policy in French, please", "I need this policy into French, please"),
    ("Explain this concept to me in German", "Explain this concept to me in German"),  # explain
    ("Write an essay in English", "Write an essay in English"),      # nothing given
])
def test_a_given_text_wanted_in_a_language_reads_as_into(task: str, text: str) -> None:
    assert read(task).text == text


@pytest.mark.parametrize(("task", "text"), [
    ("Translate our Java class into Rust", "port our code into Rust"),
    ("Konvertiere das Skript nach Kotlin", "port das Skript nach Kotlin"),
    ("Translate this letter into German", "Translate this letter into German"),
    ("Translate it so it is ready to go", "Translate it so it is ready to go"),
])
def test_translating_into_a_programming_language_reads_as_port(task: str, text: str) -> None:
    assert read(task).text == text


@pytest.mark.parametrize(("task", "text", "extra"), [
    # a quantity question with given numbers
    ("How many weekdays are there between 3 March 2025 and 17 October 2025?",
     "; calculate weekdays are there between 3 March 2025 and 17 October 2025?", ()),
    ("Wie viele Tage alt war ich am 14.07.1989?", "; calculate Tage alt war ich am 14.07.1989?",
     ()),
    # a what/which/how question about given numbers, opening the sentence or a clause
    ("What's the standard deviation of 4, 8, 15?", "calculate the standard deviation of 4, 8, 15?",
     ()),
    ("If I save 200 a month for 30 years, what do I end up with?",
     "If I save 200 a month for 30 years; calculate do I end up with?", ()),
    # a what-question without a question mark, opening its sentence
    ("whats the end value if i put 300/month into an etf at 6% a year for 25 yrs",
     "calculate the end value if i put 300/month into an etf at 6% a year for 25 yrs", ()),
    # the numbers may stand in the sentence before
    ("I earn 4,200 net and my rent is 1,350. What share of my income goes to rent?",
     "I earn 4,200 net and my rent is 1,350. calculate share of my income goes to rent?", ()),
    # numbers without such a question add a weak word
    ("Run a simulation of 10,000 dice rolls", "Run a simulation of 10,000 dice rolls",
     ("calculate",)),
    # one number is a fact of the question, not data
    ("How many people lived in Berlin in 1900?", "How many people lived in Berlin in 1900?", ()),
    ("How tall is the Eiffel Tower?", "How tall is the Eiffel Tower?", ()),
])
def test_given_numbers_read_as_calculate(task: str, text: str, extra: tuple[str, ...]) -> None:
    found = read(task)
    assert (found.text, found.extra) == (text, extra)


@pytest.mark.parametrize(("task", "weigh"), [
    ("Should I buy a flat now or wait until interest rates drop?", True),
    ("Is it worth switching our team from Slack to Teams?", True),
    ("Help me decide between two job offers: one pays more, one is remote.", True),
    ("im torn between the postdoc in zurich and the industry job in berlin", True),
    ("Sollen wir unser Lager selbst betreiben oder auslagern?", True),
    ("Lohnt es sich, jetzt eine Wärmepumpe einzubauen?", True),
    ("Which one would you pick for a beginner?", True),
    ("We're considering a move to biweekly sprints.", True),
    ("Should our bakery deliver through apps, or is it not worth the fees?", True),
    ("Wir überlegen, ob wir ein zweites Café eröffnen.", True),
    ("Should I take an umbrella today?", False),          # needs the weather, not a weighing
    ("What should I cook for dinner?", False),            # no decision between ways
    ("Write a blog post on whether we should go remote", False),
])
def test_a_decision_question_reads_as_weigh(task: str, weigh: bool) -> None:
    found = read(task)
    assert found.text.startswith("weigh ") is weigh
    assert ("a decision question as 'weigh'" in found.notes) is weigh


def test_a_decision_question_after_numbers_is_weighed_not_computed() -> None:
    found = read("My landlord offers 3 more years at a 10% higher rent, or I can leave. "
                 "What would you do?")
    assert found.text.endswith("leave. weigh What would you do?")   # its own sentence
    assert "calculate" not in found.text.split()


@pytest.mark.parametrize(("task", "migration"), [
    ("Move all 40 of our repos from Bitbucket to GitHub", True),
    ("Port our whole backend from Java 8 to Java 21", True),
    ("Wir müssen die komplette Serverlandschaft auf Linux umziehen", True),
    ("Port the legacy Perl script to Python 3", False),     # no scope: one change
    ("Move all my photos from my phone to the laptop", False),  # one's own things: an errand
    ("Should we move our team from Jira to Linear?", False),
])
def test_moving_a_whole_system_reads_as_a_migration(task: str, migration: bool) -> None:
    found = read(task)
    assert ("migration" in found.text.split()) is migration
    assert ("subtasks" in found.extra) is migration


@pytest.mark.parametrize(("text", "roles"), [
    ("the views of a CFO, a head of sales and a customer success lead", True),
    ("an investor, an employee and an HR expert", True),
    ("a lawyer, a developer-relations person and our CTO", True),
    ("aus Sicht der Geschäftsführung, des Betriebsrats und einer Teamleiterin", True),
    ("Get a teacher's, a parent's and a student's take", True),
    ("a head of the sales team, a CTO, and a lawyer", True),      # inner determiners
    ("a lawyer and a doctor", False),                              # two are no list of three
    ("the pros, cons and risks", False),                           # items without determiners
    ("new CMS, new design, and 2,000 pages", False),
    ("a spec, a design doc and tests", False),
    ("a person with a very long title here, a b and a c", False),   # an item too long
])
def test_role_lists(text: str, roles: bool) -> None:
    assert role_list(text) is roles


@pytest.mark.parametrize(("task", "extra"), [
    ("I'd like to hear a CFO, a head of sales and a customer on this",
     ("perspectives", "roles")),                                  # asks for their views
    ("Was würden ein Arzt, eine Anwältin und ein Lehrer dazu sagen?", ("perspectives", "roles")),
    ("Book a table, a taxi and a hotel", ("perspectives",)),      # a list, no views asked
])
def test_a_list_of_roles_adds_perspectives(task: str, extra: tuple[str, ...]) -> None:
    assert read(task).extra == extra


@pytest.mark.parametrize(("task", "text"), [
    ("Translate this regex into plain English: ^a+$", "explain this code into plain English"),
    ("Übersetze den Bescheid in einfache Sprache", "explain den Bescheid in einfache Sprache"),
    ("Translate this letter into English", "Translate this letter into English"),
])
def test_translating_into_plain_words_reads_as_explain(task: str, text: str) -> None:
    assert read(task).text.startswith(text)


@pytest.mark.parametrize(("task", "left"), [
    ("I'm a project manager and our launch slipped.", "and our launch slipped."),
    ("Ich bin Lehrerin, schreib mir ein Quiz", ", schreib mir ein Quiz"),
    ("I'm a bit lost with this decorator, explain it", "I'm a bit lost"),   # more than a role
    ("Our CTO said I'm a project manager now", "Our CTO said I'm"),         # not a clause start
])
def test_who_is_asking_is_left_out(task: str, left: str) -> None:
    assert read(task).text.strip().startswith(left)


@pytest.mark.parametrize(("task", "act"), [
    ("Remind me at 5pm to read the code review comments", "remind"),
    ("Transfer the summary document to my USB stick", "transfer"),
    ("Please order new printer toner for the office", "order"),
    ("Kannst du meine Steuererklärung bei ELSTER abschicken?", "abschicken"),
    ("Bestell mir eine Pizza", "bestell"),
    ("Send me a summary of this report", None),                  # handing over, as "give me"
    ("Set up a debate about basic income", None),
    ("Turn these notes into a LinkedIn post", None),
    ("Summarise the booking terms and cancel nothing", None),     # not the predicate
])
def test_action_requests(task: str, act: str | None) -> None:
    assert action_request(task) == act


@pytest.mark.parametrize(("task", "fact"), [
    ("What's the boiling point of water at sea level in Fahrenheit?", True),
    ("whats the difference betwen a noun and a pronoun, in one line", True),  # a wh-word opens it
    ("Wie hoch ist die Zugspitze?", True),
    ("What's on my calendar next Tuesday?", False),                  # one's own
    ("What's the weather going to be in Hamburg tomorrow morning?", False),  # to come
    ("What is 15% of 2,340 plus 7?", False),                          # given numbers
    ("Can you tell me the boiling point of water?", False),          # a request
    ("Boiling point of ethanol?", False),                             # no question word
    ("What is the capital of Mongolia? And who founded it?", False),  # two questions
    ("What would a good structure be for a long report on our climate strategy for the "
     "next ten years?", False),                                        # too long
])
def test_fact_questions(task: str, fact: bool) -> None:
    assert fact_question(task) is fact


@pytest.mark.parametrize(("task", "live"), [
    ("Where's my Amazon package right now?", "own"),
    ("What's my current checking account balance?", "own"),
    ("How many visitors are on our website right now?", "own"),
    ("Wie ist mein aktueller Kontostand?", "own"),
    ("Track my parcel 0034043416 and tell me where it is right now.", "own"),  # asked, one number
    ("Look through my statements and tell me where my money went last month.", "own"),
    ("Who won last night's match?", "world"),                          # the day just gone
    ("Is the 14:32 train to York on time today?", "world"),            # a clock time is one number
    ("Wie ist gerade der Verkehr auf der A8?", "world"),
    ("What's the current state of research on batteries?", None),  # nothing of one's own
    ("Who is the current Secretary-General of the UN?", None),       # 'current': an office's holder
    ("Can you translate this for tonight?", None),                   # a request, not a question
    ("Here are the minutes of yesterday's meeting, what are the key points?", None),
    ("What's my average over 27:40, 27:15 and 26:58 today?", None),  # numbers: a calculation
    ("Where is my package right now? Also summarise the mail.", None),  # more than one question
    ("Where's my Amazon package?", "own"),                            # the state of one's own
    ("Translate my letter and tell me what it says by tonight.", None),  # a deadline
])
def test_live_questions(task: str, live: str | None) -> None:
    assert live_question(task) == live


def test_notes_say_what_was_read() -> None:
    notes = read("Port our whole app from Java 8 to Java 21 and explain src/main.py").notes
    assert "code as 'code'" in notes
    assert "moving a whole system as 'migration' with 'subtasks'" in notes
    assert read("Summarise the meeting notes").notes == ()
