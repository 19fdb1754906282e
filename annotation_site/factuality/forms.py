"""Forms of the project pages (staff). They only collect input; the services check and act."""

from django import forms

from annotation_site.corpus.models import Dataset, System

from . import protocol
from .models import Project


class ProjectCreateForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="Letters, digits, '.', '_' and '-'; used in addresses.")
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.order_by("name"), to_field_name="name")
    kind = forms.ChoiceField(choices=Project.Kind.choices, initial=Project.Kind.FACTUALITY, label="Task")
    systems = forms.ModelMultipleChoiceField(
        queryset=System.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Leave all unticked to include every system of the dataset (human caption sets excepted).",
    )
    human_systems = forms.ModelMultipleChoiceField(
        queryset=System.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Human caption sets",
        help_text="Reference captions made into a system (for example by a DA campaign). Included only when "
        "ticked: annotators would judge them as if a model had written them.",
    )
    videos = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
        label="Videos",
        help_text="Video ids, one per line; empty: every video with a caption of those systems.",
    )
    annotators_per_video = forms.IntegerField(
        min_value=1, max_value=50, initial=3, help_text="Different annotators per video (3 in ActivityNet-Fact)."
    )
    shuffle_systems = forms.BooleanField(
        required=False,
        initial=True,
        label="Shuffle the captions",
        help_text="Each annotator sees a video's captions in their own order. "
        "System names are never shown to annotators.",
    )
    annotators = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        label="Invite",
        help_text="User names, one per line; new accounts get a link to set their password.",
    )
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    preset = forms.ChoiceField(
        required=False,
        label="Rating scale",
        choices=[(key, preset["label"]) for key, preset in protocol.RATING_PRESETS.items()],
        help_text="Rating task only: the scale and its anchor labels (editable after creation).",
    )
    rationale = forms.ChoiceField(
        choices=Project.Rationale.choices,
        initial=Project.Rationale.OFF,
        required=False,
        label="Rationale",
        help_text="Rating task only: ask for a free-text reason for each rating.",
    )

    def __init__(self, *args, dataset=None, **kwargs):
        super().__init__(*args, **kwargs)
        if dataset is not None:
            systems = System.objects.filter(dataset=dataset).order_by("position", "name")
            self.fields["systems"].queryset = systems.filter(is_human=False)
            self.fields["human_systems"].queryset = systems.filter(is_human=True)
            self.fields["human_systems"].label_from_instance = lambda system: f"{system.name} (human)"
            self.fields["dataset"].initial = dataset.name

    def chosen_systems(self):
        """The systems ticked (None: the default, every system that is not human), human ones included when
        ticked."""
        chosen = list(self.cleaned_data["systems"]) + list(self.cleaned_data.get("human_systems") or [])
        if self.cleaned_data.get("human_systems") and not self.cleaned_data["systems"]:
            chosen = list(self.fields["systems"].queryset) + list(self.cleaned_data["human_systems"])
        return chosen or None

    def clean_videos(self):
        return [line.strip() for line in self.cleaned_data["videos"].splitlines() if line.strip()]

    def clean_annotators(self):
        return [line.strip() for line in self.cleaned_data["annotators"].splitlines() if line.strip()]


class ProjectSettingsForm(forms.Form):
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    annotators_per_video = forms.IntegerField(min_value=1, max_value=50)
    instructions = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 22}),
        help_text="Plain text. '## ' starts a heading, '- ' a list item, a blank line "
        "a paragraph; [brackets] show marked words.",
    )
    question = forms.CharField(required=False, max_length=300, help_text="Rating task: the question asked.")
    rationale = forms.ChoiceField(choices=Project.Rationale.choices, required=False)

    def __init__(self, *args, anchors=(), **kwargs):
        super().__init__(*args, **kwargs)
        for value, label in anchors:
            self.fields[f"anchor_{value}"] = forms.CharField(max_length=300, initial=label, label=f"Anchor {value}")

    def anchors(self):
        return {
            int(name[len("anchor_") :]): value
            for name, value in self.cleaned_data.items()
            if name.startswith("anchor_")
        }


class InviteForm(forms.Form):
    usernames = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2, "spellcheck": "false"}),
        label="User names",
        help_text="One per line. New accounts get a one-time link to set their password.",
    )

    def clean_usernames(self):
        names = [line.strip() for line in self.cleaned_data["usernames"].splitlines() if line.strip()]
        if not names:
            raise forms.ValidationError("Give at least one user name.")
        return names


class RawImportForm(forms.Form):
    file = forms.FileField(
        widget=forms.FileInput(attrs={"accept": ".jsonl,.ndjson,.txt"}),
        help_text="Raw per-annotator labels, one JSON object per line.",
    )
    own_export = forms.BooleanField(
        required=False,
        label="This file is this project's own download with real ids",
        help_text="Then an id that is one of the project's annotators is that annotator (their labels are "
        "replaced). Without it such an id is refused.",
    )
