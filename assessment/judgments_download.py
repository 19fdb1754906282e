"""A campaign's judgments as the rows of its download (the page's ``judgments.csv`` and the API's GET): the
``da_import_judgments`` format (``csv_import.HEADER``), HITs and items by their external ids, else by number and
1-based position (``csv_import.hit_key`` / ``item_key``, the keys an import of the file matches them by), so a
download imported again restores the campaign."""

from django.http import StreamingHttpResponse

from annotation_site import spreadsheet_csv

from .csv_import import HEADER, hit_key, item_key
from .models import Judgment

CHUNK = 5000


def rows(campaign):
    """The rows, streamed from one query (ordered by HIT, worker and position)."""
    found = (
        Judgment.objects.filter(assignment__hit__campaign=campaign)
        .order_by("assignment__hit__number", "assignment__worker__external_id", "item__position")
        .values_list(
            "assignment__worker__external_id",
            "assignment__hit__external_id",
            "assignment__hit__number",
            "item__external_id",
            "item__position",
            "item__caption__system__name",
            "item__caption__video__external_id",
            "item__item_type",
            "item__control_of__external_id",
            "item__control_of__position",
            "score",
        )
    )
    for worker, hit_ext, hit_no, item_ext, pos, system, video, item_type, ctl_ext, ctl_pos, score in found.iterator(
        chunk_size=CHUNK
    ):
        control = "" if ctl_pos is None else item_key(ctl_ext, ctl_pos)
        yield [worker, hit_key(hit_ext, hit_no), item_key(item_ext, pos), system, video, item_type, control, score]


def response(campaign):
    """The download as an HTTP answer (the page and the API), streamed: never whole in memory."""
    answer = StreamingHttpResponse(
        spreadsheet_csv.stream(HEADER, rows(campaign)), content_type="text/csv; charset=utf-8"
    )
    answer["Content-Disposition"] = f'attachment; filename="{campaign.name}-judgments.csv"'
    return answer
