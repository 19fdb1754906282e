"""Forms of the researcher pages. They only collect input; the services check and act."""

import json

from django import forms

from annotation_site import safe_json
from annotation_site.corpus.models import Dataset
from annotation_site.factuality.forms import InviteForm  # noqa: F401 - the same form on both protocols' pages

from . import participants, presets


class TaskCreateForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="Letters, digits, '.', '_' and '-'; used in addresses.")
    dataset = forms.ModelChoiceField(
        queryset=Dataset.objects.order_by("name"),
        to_field_name="name",
        help_text="The dataset whose videos the items show.",
    )
    preset = forms.ChoiceField(
        choices=presets.choices(),
        help_text="What each item shows and the questions: "
        "editable on the settings page until the first item is handed out.",
    )
    annotators_per_item = forms.IntegerField(
        min_value=1, max_value=50, initial=3, help_text="Different annotators per item (three in FIFA)."
    )
    annotators = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        label="Invite",
        help_text="User names, one per line; new accounts get a link.",
    )
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def clean_annotators(self):
        return [line.strip() for line in self.cleaned_data["annotators"].splitlines() if line.strip()]


class TaskSettingsForm(forms.Form):
    title = forms.CharField(max_length=200, required=False, help_text="The task's name as annotators see it.")
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    annotators_per_item = forms.IntegerField(min_value=1, max_value=50)
    instructions = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 10}),
        help_text="Plain text: '## ' starts a heading, '- ' a list item.",
    )
    definition = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 24, "spellcheck": "false", "class": "code"}),
        help_text="JSON (see docs/tasks.md). Locked once the first item is handed out.",
    )

    def clean_definition(self):
        try:
            return safe_json.loads(self.cleaned_data["definition"])
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None


class ImportForm(forms.Form):
    file = forms.FileField(widget=forms.FileInput(attrs={"accept": ".jsonl,.ndjson,.txt"}))
    replace = forms.BooleanField(required=False, label="Replace every item (only before work starts)")


class ParticipantForm(forms.Form):
    provider = forms.CharField(max_length=30, initial="link", help_text="Where the participant comes from.")
    external_id = forms.CharField(max_length=200, label="Participant id")
    limit = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=participants.MAX_LIMIT,
        help_text="Items they may take (empty: no cap).",
    )
    finish_url = forms.URLField(
        required=False,
        label="Finish address",
        assume_scheme="https",
        help_text="Where they go when done (e.g. a completion URL with its code).",
    )
