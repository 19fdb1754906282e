"""Forms of the Direct Assessment pages."""
from django import forms

from annotation_site.corpus.models import DATASET_NAME, System

from . import campaigns
from .models import QCTest


class CampaignForm(forms.Form):
    """Create a campaign over a chosen dataset (the dataset is picked first, so its systems can be listed)."""

    name = forms.CharField(max_length=100, validators=[DATASET_NAME])
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    systems = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, help_text="The systems to evaluate.")
    human = forms.ChoiceField(label="Human caption set",
                              help_text="Hidden extra system and source of the original/degraded QC pairs.")
    hit_size = forms.IntegerField(initial=100, min_value=4, max_value=1000, label="Items per HIT")
    pairs_per_hit = forms.IntegerField(initial=10, min_value=1, label="Original/degraded pairs per HIT")
    repeats_per_hit = forms.IntegerField(initial=10, min_value=0, label="Repeats per HIT")
    min_control_distance = forms.IntegerField(required=False, min_value=2, label="Minimum control distance",
                                              help_text="Positions between a control item and its partner "
                                                        "(empty: a quarter of the HIT).")
    workers_per_hit = forms.IntegerField(initial=1, min_value=1, label="Workers per HIT")
    seed = forms.IntegerField(required=False, min_value=0, max_value=2 ** 63 - 1,
                              help_text="Empty: a random seed (recorded, so the plan can be re-created).")
    qc_test = forms.ChoiceField(choices=QCTest.choices, initial=QCTest.WILCOXON, label="QC test")
    qc_threshold = forms.FloatField(initial=0.05, min_value=0.0001, max_value=0.5, label="QC threshold (p <)")
    qc_min_pairs = forms.IntegerField(initial=10, min_value=1, label="QC minimum pairs")

    def __init__(self, *args, dataset, **kwargs):
        super().__init__(*args, **kwargs)
        self.dataset = dataset
        systems = System.objects.filter(dataset=dataset, is_human=False).order_by("position", "name")
        self.fields["systems"].choices = [(s.name, s.name) for s in systems]
        self.fields["systems"].initial = [s.name for s in systems]
        human = [(f"system:{s.name}", f"{s.name} (human system)") for s in campaigns.human_systems(dataset)]
        human += [(f"references:{r}", f"{r} (reference set)") for r in campaigns.reference_sets(dataset)
                  if f"system:{r}" not in dict(human)]
        self.fields["human"].choices = human

    def data_for_service(self):
        data = dict(self.cleaned_data)
        kind, _, value = data.pop("human").partition(":")
        data["human_system" if kind == "system" else "reference_set"] = value
        data["dataset"] = self.dataset.name
        for optional in ("seed", "min_control_distance"):
            if data.get(optional) is None:
                data.pop(optional, None)
        return data


class AssignForm(forms.Form):
    workers = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), label="Worker ids",
                              help_text="One per line (or separated by commas): each gets a HIT and a signed link.")

    def worker_ids(self):
        text = self.cleaned_data["workers"].replace(",", "\n")
        return [line.strip() for line in text.splitlines() if line.strip()]
