from django import forms

from annotation_site.interchange import formats
from annotation_site.interchange.services import DEFAULT_LABEL_SET


class DatasetImportForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="Letters, digits, '.', '_' and '-'.")
    format = forms.ChoiceField(
        choices=[
            ("factvc", "FactVC folder (zip) or factuality_annotation.json"),
            ("jsonl", "JSONL, one caption per line"),
        ]
    )
    file = forms.FileField(widget=forms.FileInput(attrs={"accept": ".zip,.json,.jsonl,.ndjson,.txt"}))
    labels = forms.CharField(
        max_length=100,
        initial=DEFAULT_LABEL_SET,
        required=False,
        help_text="Name for the imported factuality labels, if the file has any.",
    )
    replace = forms.BooleanField(
        required=False,
        label="Replace an existing dataset",
        help_text="Replace a dataset of the same name (refused while people's judgments are on it).",
    )
    force_delete_judgments = forms.BooleanField(
        required=False,
        label="Delete the human judgments on it too",
        help_text="Only with “Replace”: the old dataset's factuality answers, DA judgments and task answers are "
        "deleted with it. Export them first.",
    )
    youtube = forms.BooleanField(
        required=False,
        initial=True,
        label="YouTube addresses",
        help_text="Register YouTube addresses for ids that look like YouTube ids.",
    )

    def clean_format(self):
        value = self.cleaned_data["format"]
        if value not in formats.FORMATS:
            raise forms.ValidationError("Unknown format.")
        return value


class VideoAddForm(forms.Form):
    external_id = forms.CharField(max_length=200, label="Video id")
    file = forms.FileField(
        required=False,
        help_text="A video file (mp4, webm, ...).",
        widget=forms.FileInput(attrs={"accept": "video/*,.mkv,.mov"}),
    )
    url = forms.URLField(
        required=False, max_length=1000, assume_scheme="https", help_text="Or an address (YouTube links play embedded)."
    )
