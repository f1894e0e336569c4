"""Broken wizard documents and the reason each is left out with (loader and cache tests)."""

from __future__ import annotations

BROKEN = [
    ("title: [unclosed\n", "line 2:1: YAML error"),
    ("title: a\ntitle: b\nfields: []\npromptTemplate: x\n", "duplicate key 'title'"),
    ("- a list\n", "expected a mapping at the top level, found list"),
    ("", "found an empty file"),
    ("title: T\nfields: []\n", "promptTemplate: missing required key"),
    ("title: T\nfields: []\npromtTemplate: x\n", "did you mean 'promptTemplate'"),
    ("title: T\nfields: []\npromptTemplate: x\nfieldz: []\n", "fieldz: unknown key (did you mean"
     " 'fields'?)"),
    ("title: T\npromptTemplate: x\nfields:\n  - {name: a, type: string, lable: A}\n",
     "fields[0].lable: unknown key (did you mean 'label'?)"),
    ("title: T\npromptTemplate: x\nfields:\n  - {name: a, type: colour}\n",
     "fields[0].type: unknown_field_type 'colour'"),
    ("title: T\npromptTemplate: x\nfields:\n  - {name: a, type: integer, integerMax: 3,"
     " defaultValue: 9}\n", "fields[0].defaultValue: above_max"),
    ("title: T\npromptTemplate: x\nfields:\n  - {name: a, type: select, choices: [x],"
     " defaultValue: y}\n", "fields[0].defaultValue: invalid_choice"),
    ("title: T\nfields: []\npromptTemplate: '{% if x %}open'\n", "promptTemplate line 1"),
    ("title: T\nfields: []\npromptTemplate: \"{{ ''.__class__ }}\"\n",
     "'__class__' is not allowed"),
    ("title: T\nfields: []\npromptTemplate: \"{% include 'x' %}\"\n", "{% include %}"),
    ("title: T\nfields: []\npromptTemplate: x\nsuggestedFollowUps:\n  - {wizard: n, "
     "condition: 'a ==='}\n", "suggestedFollowUps[0]: template"),
    (b"title: \xff\xfe\n", "not UTF-8"),
    # what the compiler would refuse is found by the check a listing makes (no compiling)
    ("title: T\nfields: []\npromptTemplate: '{{ x|nosuchfilter }}'\n",
     "no filter named 'nosuchfilter'"),
    ("title: T\nfields: []\npromptTemplate: '{% if x is nosuchtest %}a{% endif %}'\n",
     "no test named 'nosuchtest'"),
    ("title: T\nfields: []\npromptTemplate: '{% block a %}{% endblock %}{% block a %}"
     "{% endblock %}'\n", "block 'a' defined twice"),
    ("title: T\nfields: []\npromptTemplate: '{% for loop in x %}{% endfor %}'\n",
     "special loop variable"),
    ("title: T\nfields: []\npromptTemplate: '{% macro m(caller) %}{% endmacro %}'\n",
     "'caller' argument"),
    ("title: T\nfields: []\npromptTemplate: x\nsuggestedFollowUps:\n  - {wizard: n, "
     "label: '{{ a|nosuchfilter }}'}\n", "suggestedFollowUps[0]: template"),
]
