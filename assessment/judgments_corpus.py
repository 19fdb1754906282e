"""Which corpus imported DA judgments attach to (``csv_import.validate``): the dataset named by the campaign,
whose systems, videos, captions and reference sets the file's names must be when it holds a corpus, and whose
human caption set must be a human system. Checks only; ``csv_import`` writes."""

from annotation_site.corpus.models import Caption, Dataset, Reference, Sentence, System, Video


def dataset_of(campaign, campaign_name):
    """The dataset the judgments go to: the campaign's, else the one of the campaign's name (the import creates
    it when there is none: None). At most one query."""
    return campaign.dataset if campaign is not None else Dataset.objects.filter(name=campaign_name).first()


def check_corpus(dataset, human, rows, filename, problems):
    """Judgments imported into a dataset that holds a corpus (captions with text: an imported dataset, not one an
    earlier judgments import made) attach to its captions. A system, video or caption the file names and the
    dataset lacks was created empty: an empty system listed beside the real ones, captions without text on the
    video pages, a dataset export its own import refuses. Each is a problem (its first line). The human captions
    may name a reference set of the dataset, as ``da_plan --reference-set`` does: their human system is then made
    of the references (``campaigns.human_system_from_references``, with their text); returns that set's name,
    else "". Four queries for a corpus dataset, at most one otherwise."""
    if dataset is None or not Sentence.objects.filter(caption__video__dataset=dataset).exists():
        return ""
    human = human or None
    systems = set(System.objects.filter(dataset=dataset).values_list("name", flat=True))
    from_references = ""
    if human is not None and human not in systems:
        from_references = human
        referenced = set(
            Reference.objects.filter(video__dataset=dataset, reference_set=human).values_list(
                "video__external_id", flat=True
            )
        )
    captioned = set(Caption.objects.filter(video__dataset=dataset).values_list("video__external_id", "system__name"))
    videos = set(Video.objects.filter(dataset=dataset).values_list("external_id", flat=True))
    said = set()
    for row in rows:
        if row.video not in videos:
            what = ("video", row.video)
            message = f"video {row.video!r} is not a video of dataset {dataset.name}"
            where = "field 'video_id'"
        elif row.system == from_references:
            if row.video in referenced:
                continue
            what = ("reference", row.video)
            message = (
                f"reference set {human!r} of dataset {dataset.name} has no reference for video {row.video!r}"
                if referenced
                else f"{human!r} is neither a system nor a reference set of dataset {dataset.name}"
            )
            where = "field 'system'"
        elif row.system not in systems:
            what = ("system", row.system)
            message = f"system {row.system!r} is not a system of dataset {dataset.name}"
            where = "field 'system'"
        elif (row.video, row.system) not in captioned:
            what = ("caption", row.video, row.system)
            message = f"dataset {dataset.name} has no caption of system {row.system!r} for video {row.video!r}"
            where = "field 'system'"
        else:
            continue
        if what not in said:
            said.add(what)
            problems.add(
                filename,
                f"{message}: judgments imported into a dataset with captions attach to them (a name the dataset "
                "lacks would add one without text); name its systems and videos as the dataset has them",
                line=row.line,
                where=where,
            )
    return from_references


def check_human_set(dataset, human, rows, filename, problems):
    """The human caption set the file names must be a human system of the dataset when the dataset has it
    already (judgments attach to an imported corpus): the import reused the system as it was, so the campaign's
    human captions stayed an ordinary system, ranked among the systems and scored by the metric module against
    the references they may come from. ``da_plan`` refuses the same."""
    if not human:
        return
    system = System.objects.filter(dataset=dataset, name=human).first() if dataset is not None else None
    if system is not None and not system.is_human:
        line = next((row.line for row in rows if row.system == human), None)
        problems.add(
            filename,
            f"system {human!r} of dataset {dataset.name} is not a human caption set, but this file makes it the "
            "campaign's human captions: mark it human in the dataset first, or name the human captions as the "
            "dataset has them",
            line=line,
            where="field 'system'",
        )
