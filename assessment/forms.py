"""Forms of the Direct Assessment pages."""

from django import forms

from annotation_site.corpus import services as corpus_services
from annotation_site.corpus.models import DATASET_NAME, System

from . import campaigns, csv_import
from .models import WATCH_FRACTION, WATCH_MAX_SECONDS, QCTest


class CampaignForm(forms.Form):
    """Create a campaign over a chosen dataset (the dataset is picked first, so its systems can be listed)."""

    name = forms.CharField(max_length=100, validators=[DATASET_NAME])
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    systems = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, help_text="The systems to evaluate.")
    human = forms.ChoiceField(
        label="Human caption set", help_text="Hidden extra system and source of the original/degraded QC pairs."
    )
    hit_size = forms.IntegerField(
        required=False,
        min_value=campaigns.HIT_SIZE_RANGE[0],
        max_value=campaigns.HIT_SIZE_RANGE[1],
        label="Items per HIT",
    )
    pairs_per_hit = forms.IntegerField(required=False, min_value=1, label="Original/degraded pairs per HIT")
    repeats_per_hit = forms.IntegerField(required=False, min_value=0, label="Repeats per HIT")
    min_control_distance = forms.IntegerField(
        required=False,
        min_value=2,
        label="Minimum control distance",
        help_text="Positions between a control item and its partner (empty: a quarter of the HIT).",
    )
    workers_per_hit = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=campaigns.MAX_WORKERS_PER_HIT,
        label="Workers per HIT",
        help_text="Judgments of every caption: at least 3, so a caption keeps "
        "scores when a worker fails QC, and a multiple of the HITs a "
        "worker needs to reach the QC minimum.",
    )
    seed = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=2**63 - 1,
        help_text="Empty: a random seed (recorded, so the plan can be re-created).",
    )
    qc_test = forms.ChoiceField(choices=QCTest.choices, initial=QCTest.WILCOXON, label="QC test")
    qc_threshold = forms.FloatField(initial=0.05, min_value=0.0001, max_value=0.5, label="QC threshold (p <)")
    qc_min_pairs = forms.IntegerField(
        initial=10, min_value=1, max_value=campaigns.MAX_QC_MIN_PAIRS, label="QC minimum pairs"
    )
    watch_fraction = forms.FloatField(
        required=False,
        initial=WATCH_FRACTION,
        min_value=0,
        max_value=1,
        label="Watch share",
        help_text="Share of each clip that must really play (seeking does not count) before the slider unlocks.",
    )
    watch_max_seconds = forms.FloatField(
        required=False,
        initial=WATCH_MAX_SECONDS,
        min_value=0,
        label="Watch cap (seconds)",
        help_text="At most this many seconds of playback are asked for (long clips).",
    )

    def __init__(self, *args, dataset, **kwargs):
        super().__init__(*args, **kwargs)
        self.dataset = dataset
        systems = System.objects.filter(dataset=dataset, is_human=False).order_by("position", "name")
        self.fields["systems"].choices = [(s.name, s.name) for s in systems]
        self.fields["systems"].initial = [s.name for s in systems]
        human = [(f"system:{s.name}", f"{s.name} (human system)") for s in campaigns.human_systems(dataset)]
        human += [
            (f"references:{r}", f"{r} (reference set)")
            for r in corpus_services.reference_sets(dataset)
            if f"system:{r}" not in dict(human)
        ]
        self.fields["human"].choices = human
        self.suggested = self._suggest(list(systems), human)
        for name, value in (self.suggested or {}).items():
            self.fields[name].initial = value
        if self.suggested:
            self.fields["hit_size"].help_text = (
                "Suggested for this dataset: "
                + campaigns._describe(self.suggested)
                + ". Empty fields take the suggested values."
            )
        else:
            self.fields["hit_size"].help_text = (
                "This dataset's human captions cannot give quality-control pairs "
                "(they need 3 words or more, on two videos at least)."
            )

    def _suggest(self, systems, human_choices):
        """The layout that works for every system and the first human caption set (shown as the defaults)."""
        if not human_choices or not systems:
            return None
        kind, _, value = human_choices[0][0].partition(":")
        if kind == "system":
            return campaigns.suggested_layout(
                self.dataset, systems, human_system=System.objects.get(dataset=self.dataset, name=value)
            )
        return campaigns.suggested_layout(self.dataset, systems, reference_set=value)

    def data_for_service(self):
        data = dict(self.cleaned_data)
        kind, _, value = data.pop("human").partition(":")
        data["human_system" if kind == "system" else "reference_set"] = value
        data["dataset"] = self.dataset.name
        for optional in ("seed", "watch_fraction", "watch_max_seconds", *campaigns.LAYOUT_FIELDS):
            if data.get(optional) is None:
                data.pop(optional, None)
        return data


class AssignForm(forms.Form):
    workers = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Worker ids",
        help_text="One per line (or separated by commas): each gets a HIT and a signed link.",
    )

    def worker_ids(self):
        text = self.cleaned_data["workers"].replace(",", "\n")
        return [line.strip() for line in text.splitlines() if line.strip()]


class JudgmentsImportForm(forms.Form):
    """Upload a judgments CSV (the ``da_import_judgments`` format) into a campaign, new or existing."""

    campaign = forms.CharField(
        max_length=100,
        validators=[DATASET_NAME],
        help_text="An existing campaign is extended; a new one is created, with a dataset of the same name.",
    )
    file = forms.FileField(
        widget=forms.FileInput(attrs={"accept": ".csv,text/csv"}),
        help_text="One judgment per line, with a header line.",
    )
    own_download = forms.BooleanField(
        required=False,
        label="This file is this platform's own judgments download",
        help_text=csv_import.OWN_DOWNLOAD_HELP,
    )
