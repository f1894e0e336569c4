"""The wizard schema: LocalizableText, YAML 1.1 safety, field rules."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from vance_cli.base import yamlio
from vance_cli.wizards.model import FieldType, LocalizableText, Wizard, WizardField


def _wizard(**extra: Any) -> dict[str, Any]:
    return {"title": "T", "fields": [], "promptTemplate": "x", **extra}


@pytest.mark.parametrize(("raw", "lang", "text"), [
    ("Council", "de", "Council"),                       # plain string = {en: …}
    ({"de": "Gremium", "en": "Council"}, "de", "Gremium"),
    ({"de": "Gremium", "en": "Council"}, "fr", "Council"),  # else English
    ({"de": "Gremium", "fr": "Conseil"}, "it", "Gremium"),  # else the first entry
    ({"de": "  ", "fr": "Conseil"}, "de", "Conseil"),        # first non-blank
    ({"de": "Gremium", "en": "Council"}, "de-CH", "Gremium"),
    ({"DE": "Gremium"}, "de", "Gremium"),                   # keys are lower-cased
    ({"en": ""}, "en", ""),
])
def test_localizable_text_resolution(raw: Any, lang: str, text: str) -> None:
    assert LocalizableText.model_validate(raw).resolve(lang) == text


def test_yaml_1_1_scalars_stay_text_in_choices_and_labels() -> None:
    data = yamlio.loads("""
        name: c
        type: select
        choices:
          - no
          - on
          - 3.10
          - 010
          - {value: yes, label: off}
          - {value: 1e3, label: {de: 3.10}}
    """.replace("\n        ", "\n"))
    field = WizardField.model_validate(data)
    assert field.choice_values() == ("no", "on", "3.10", "010", "yes", "1e3")
    assert field.choices[4].label_in("en") == "off"
    assert field.choices[5].label_in("de") == "3.10"
    assert field.choices[0].label_in("de") == "no"  # no label → the value


@pytest.mark.parametrize(("field", "message"), [
    ({"name": "x", "type": "colour"}, "unknown_field_type 'colour'"),
    ({"name": "user", "type": "string"}, "clashes with the template variable 'user'"),
    ({"name": "my-field", "type": "string"}, "is not an identifier"),
    ({"name": "x", "type": "select"}, "needs 'choices'"),
    ({"name": "x", "type": "select", "choices": ["a", "a"]}, "duplicate choice values: a"),
    ({"name": "x", "type": "repeat"}, "needs 'item'"),
    ({"name": "x", "type": "repeat", "min": 3, "max": 2,
      "item": [{"name": "a", "type": "string"}]}, "min (3) is greater than max (2)"),
    ({"name": "x", "type": "integer", "integerMin": 5, "integerMax": 1},
     "integerMin (5) is greater than integerMax (1)"),
    ({"name": "x", "type": "repeat", "item": [{"name": "a", "type": "string"},
                                               {"name": "a", "type": "string"}]},
     "duplicate field names: a"),
])
def test_field_rules(field: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        WizardField.model_validate(field)
    assert message in str(caught.value)


def test_wizard_requires_title_fields_and_template_and_forbids_unknown_keys() -> None:
    with pytest.raises(ValidationError) as caught:
        Wizard.model_validate({"title": "T"})
    missing = {e["loc"][0] for e in caught.value.errors() if e["type"] == "missing"}
    assert missing == {"fields", "promptTemplate"}
    with pytest.raises(ValidationError):
        Wizard.model_validate(_wizard(promtTemplate="typo"))
    with pytest.raises(ValidationError):
        Wizard.model_validate(_wizard(title={"en": " "}))
    with pytest.raises(ValidationError):
        Wizard.model_validate(_wizard(promptTemplate="  \n"))


def test_wizard_values_are_frozen_and_availability_normalised() -> None:
    wizard = Wizard.model_validate(_wizard(availableIn="_tenant", name="ignored"))
    assert wizard.available_in == ("_tenant",)
    assert isinstance(wizard.fields, tuple)
    with pytest.raises(ValidationError):
        wizard.icon = "x"  # type: ignore[misc]
    assert Wizard.model_validate(_wizard(availableIn=None)).available_in == ()


def test_field_labels_fall_back_to_the_name() -> None:
    field = WizardField.model_validate({"name": "topic", "type": "string"})
    assert field.label_in("de") == "topic" and field.help_in("de") == ""
    assert field.type is FieldType.STRING


def test_followup_prefill_keeps_declaration_order_and_text() -> None:
    wizard = Wizard.model_validate(_wizard(suggestedFollowUps=[{
        "wizard": "next", "prefill": yamlio.loads("z: 1\na: 3.10\nm: no\n")}]))
    assert wizard.suggested_follow_ups[0].prefill == (("z", "1"), ("a", "3.10"), ("m", "no"))
    with pytest.raises(ValidationError):
        Wizard.model_validate(_wizard(suggestedFollowUps=[{"wizard": "../x"}]))
