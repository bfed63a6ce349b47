"""ropespec's Hypothesis profiles: ``dev`` (quick, the default), ``ci`` (the default when the ``CI``
environment variable is set: derandomised, no database), ``thorough``, and ``sweep`` (the pinned cases and five drawn:
a sweep of hundreds of whole models, each a first look).

They are registered under their own names (``ropespec-dev``, ``ropespec-ci``, ``ropespec-thorough``, ``ropespec-sweep``)
and only ever applied to ropespec's own properties (:func:`ropespec.properties.framework.hypothesis_settings`):
installing ropespec changes no other test's Hypothesis settings. Select with ``--profile NAME``
(``ropespec check``), ``--rope-profile NAME`` (pytest) or ``profile=`` (the Python API).
"""

from __future__ import annotations

import os

from hypothesis import settings

PROFILES = ("dev", "ci", "thorough", "sweep")
DEFAULT_PROFILE = "dev"


def hypothesis_name(profile: str) -> str:
    """The name a ropespec profile is registered under with Hypothesis."""
    return f"ropespec-{profile}"


settings.register_profile(hypothesis_name("dev"), max_examples=25, deadline=None)
settings.register_profile(hypothesis_name("ci"), parent=settings.get_profile("ci"), max_examples=40, deadline=None)
settings.register_profile(hypothesis_name("thorough"), max_examples=500, deadline=None)
settings.register_profile(hypothesis_name("sweep"), max_examples=5, deadline=None)

_active: str | None = None


def set_active(profile: str | None) -> None:
    """The profile ropespec's properties use when none is given (the pytest plugin sets it)."""
    global _active
    _active = profile


def active() -> str:
    """The profile in force: the one set, else ``ci`` on CI machines (``CI`` set), else ``dev``."""
    return _active or ("ci" if os.environ.get("CI") else DEFAULT_PROFILE)
