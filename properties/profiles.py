"""Hypothesis profiles: ``dev`` (quick, the default), ``ci`` (extends Hypothesis' built-in ci
profile: derandomised, no database) and ``thorough``. Select with ``--hypothesis-profile NAME``
(pytest) or ``--profile NAME`` (``ropespec check``)."""

from __future__ import annotations

from hypothesis import settings

PROFILES = ("dev", "ci", "thorough")
DEFAULT_PROFILE = "dev"

settings.register_profile("dev", max_examples=25, deadline=None)
settings.register_profile("ci", parent=settings.get_profile("ci"), max_examples=40, deadline=None)
settings.register_profile("thorough", max_examples=500, deadline=None)
