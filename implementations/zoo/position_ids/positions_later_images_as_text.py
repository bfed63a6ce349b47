"""Every vision block after the first gets text positions."""

from ropespec.implementations.zoo._positions import builder

TARGETS = ("position-ids.grid",)
DIAGNOSIS = "vision-as-text"
SOURCE = "mlx-vlm #1282 (later images of a multi-image prompt given text positions)"
FAMILY = "position-ids"


def make(expect):
    return builder(expect, text_after_first_image=True)
