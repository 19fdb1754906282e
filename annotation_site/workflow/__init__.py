"""Mechanics shared by the annotation protocols (factuality projects, judgment tasks), with no models of their
own: claiming a slot of a capped work unit without double allocation (``slots``), and the pieces of storing an
annotator's answer exactly once (``answers``)."""
