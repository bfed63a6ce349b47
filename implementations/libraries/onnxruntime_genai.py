"""ONNX Runtime GenAI's reading: its model builder (``python -m onnxruntime_genai.models.builder``, float32, CPU) turns
the config's tiny carrier model (:mod:`ropespec.implementations.libraries._carrier`) into an ONNX model whose cos/sin
caches are the builder's own reading of the config, and ONNX Runtime runs it. Its graph takes no positions: a call is
a prefill from position 0 (the attention mask's length), so its probes are prefills only. ``pip install -e
'.[onnx]'`` (onnxruntime-genai with onnx and onnx-ir, which its builder imports; about 120 MB, no torch of its own)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from ropespec.implementations.libraries import Library, Unreadable


class OnnxRuntimeGenAI(Library):
    name = "onnxruntime-genai"
    distribution = "onnxruntime-genai"
    module = "onnxruntime_genai.models.builder"
    extra = "onnx"
    door = "model"
    from_zero = True
    order = 30

    def __init__(self):
        self._sessions: dict = {}

    def onnx(self, folder: Path) -> Path:
        """``folder``'s model built to ONNX by the builder, once."""
        out = folder / "onnx"
        model = out / "model.onnx"
        if not model.is_file():
            run = subprocess.run([sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", str(folder), "-o",
                                  str(out), "-p", "fp32", "-e", "cpu", "-c", str(folder / "onnx-cache")],
                                 capture_output=True, text=True)
            if run.returncode != 0 or not model.is_file():
                last = ((run.stderr or run.stdout).strip().splitlines() or ["no output"])[-1]
                raise Unreadable(f"onnxruntime-genai's builder refused the carrier model: {last[:200]}")
        return model

    def logits(self, folder: Path, tokens, positions) -> np.ndarray:
        """The logits of ``tokens`` at positions 0 ... n - 1 (the only positions its graph takes), no past."""
        import onnxruntime

        n = len(tokens)
        if list(positions) != list(range(n)):
            raise ValueError("onnxruntime-genai's graph turns a prefill at positions 0 ... n - 1 only")
        path = self.onnx(folder)
        if path not in self._sessions:
            self._sessions.clear()
            options = onnxruntime.SessionOptions()
            options.log_severity_level = 4  # a refused call is said in the table, once, not also logged
            self._sessions[path] = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        session = self._sessions[path]
        feed = {"input_ids": np.asarray([tokens], dtype=np.int64), "attention_mask": np.ones((1, n), dtype=np.int64)}
        head_dim = json.loads((folder / "config.json").read_text())["head_dim"]
        for i in session.get_inputs():
            if i.name.startswith("past_key_values"):  # an empty cache: nothing before the prefill
                feed[i.name] = np.zeros((1, i.shape[1], 0, head_dim), dtype=np.float32)
        return session.run(["logits"], feed)[0][0].astype(np.float64)
