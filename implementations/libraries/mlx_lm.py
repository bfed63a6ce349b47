"""mlx-lm's reading: the model mlx-lm builds from the folder's config.json (``mlx_lm.utils.load_model``, lazily: no
weights, nothing evaluated), and the RoPE module its first attention layer of the checked layer type holds, called
as its attention calls it: ``rope(x, offset=start)`` on (batch, heads, seq, head_dim). On Linux ``pip install
'mlx-lm[cpu]'`` (the ``mlx`` extra) runs it on the CPU; its wheel needs glibc 2.35 or newer."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ropespec.implementations.libraries import Library, Unreadable
from ropespec.spec.hfconfig import checked_layer_type


def _layer_types(config: dict, folder: Path) -> list | None:
    """Each layer's type: the config's layer_types, else as the reference reading lays them out (transformers'
    config class derives them from a sliding-window pattern, Gemma 3's); None where there is no telling them apart."""
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    given = text.get("layer_types") or config.get("layer_types")
    if given or not any("sliding_window" in k for k in text):
        return given
    try:
        import transformers

        return list(getattr(transformers.AutoConfig.from_pretrained(str(folder)).get_text_config(), "layer_types",
                            None) or []) or None
    except Exception:  # noqa: BLE001  (no reading of the layout: the first layer's RoPE is taken)
        return None


def _checked_type(config: dict, kinds: list | None) -> str | None:
    """The layer type whose RoPE the reference reading states (its full-attention layers' where there are types)."""
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    return checked_layer_type(text.get("rope_parameters") or {}) or ("full_attention" if kinds else None)


class MlxLm(Library):
    name = "mlx-lm"
    distribution = "mlx-lm"
    module = "mlx_lm"
    extra = "mlx"
    order = 10

    def rope(self, folder: Path):
        import mlx.core as mx
        from mlx_lm.utils import load_model

        try:
            model, config = load_model(Path(folder), lazy=True, strict=False)
        except ValueError as e:  # "Model type X not supported."
            raise Unreadable(f"mlx-lm: {e}") from None
        ropes = {}
        for name, module in model.named_modules():
            if name.endswith("rope"):
                at = re.search(r"layers\.(\d+)\.", name)
                ropes[int(at.group(1)) if at else -1] = module
        if not ropes:
            raise Unreadable("mlx-lm's model for this config holds no module named rope")
        kinds = _layer_types(config, folder)
        wanted = _checked_type(config, kinds)
        layer = next((i for i in sorted(ropes) if kinds and wanted and 0 <= i < len(kinds) and kinds[i] == wanted),
                     min(ropes))
        rope = ropes[layer]

        def f(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
            if len(positions) > 1 and positions[0] == positions[-1]:  # a decoding step: one row per head
                out = rope(mx.array(x[None, :, None, :]), offset=int(positions[0]))[0, :, 0]
            else:  # a prefill from positions[0] on
                out = rope(mx.array(x[None, None]), offset=int(positions[0]))[0, 0]
            return np.array(out.astype(mx.float32))

        return f
