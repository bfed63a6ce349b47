"""llama.cpp's reading, through llama-cpp-python: the tiny carrier model of the config
(:func:`ropespec.implementations.libraries._carrier.save_carrier`), written to GGUF by llama.cpp's own
``convert_hf_to_gguf.py`` and loaded by llama.cpp, whose logits are its reading. The converter reads the config
through the installed transformers (its ``AutoConfig``), so the reading is of both: the table names the transformers
version.

The converter is not in llama-cpp-python's wheel: it is taken from the llama.cpp source tree that
``$ROPESPEC_LLAMA_CPP`` names, else from the installed version's own source package on PyPI (``pip download
llama-cpp-python==VERSION --no-binary :all:``), unpacked once under ``~/.cache/ropespec/``. ``pip install -e
'.[llamacpp]'`` compiles llama.cpp (about 4 minutes on 2 cores; pip keeps the built wheel in its cache).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np

from ropespec.implementations.libraries import Library, Unreadable

#: the smallest context llama.cpp is asked for (it rounds a context up to a multiple of 256)
N_CTX = 256
#: where an unpacked source package is kept
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ropespec"


class LlamaCpp(Library):
    name = "llama.cpp"
    distribution = "llama-cpp-python"
    module = "llama_cpp"
    extra = "llamacpp"
    door = "model"
    order = 20

    def missing(self) -> str | None:
        said = super().missing()
        if said is not None:
            return said
        try:
            self.converter()
        except RuntimeError as e:
            return str(e)
        for needed in ("sentencepiece", "transformers", "torch"):
            try:
                __import__(needed)
            except ImportError:
                return f"llama.cpp's converter needs {needed} (pip install -e '.[llamacpp]')"
        return None

    def converter(self) -> Path:
        """convert_hf_to_gguf.py of the installed llama.cpp's source (RuntimeError, one line, where none is found)."""
        own = os.environ.get("ROPESPEC_LLAMA_CPP")
        if own:
            script = Path(own) / "convert_hf_to_gguf.py"
            if not script.is_file():
                raise RuntimeError(f"ROPESPEC_LLAMA_CPP={own} holds no convert_hf_to_gguf.py")
            return script
        version = self.version()
        tree = CACHE / f"llama.cpp-{version}"
        script = tree / "convert_hf_to_gguf.py"
        if script.is_file():
            return script
        with tempfile.TemporaryDirectory() as tmp:
            got = subprocess.run([sys.executable, "-m", "pip", "download", f"llama-cpp-python=={version}", "--no-deps",
                                  "--no-binary", ":all:", "-d", tmp, "-q"], capture_output=True, text=True)
            sdists = list(Path(tmp).glob("llama_cpp_python-*.tar.gz"))
            if got.returncode != 0 or not sdists:
                raise RuntimeError(f"llama.cpp's converter: the source package of llama-cpp-python {version} could "
                                   f"not be downloaded (pip download: {got.stderr.strip().splitlines()[-1:]}); set "
                                   f"ROPESPEC_LLAMA_CPP to a llama.cpp source tree")
            inner = "vendor/llama.cpp/"
            with tarfile.open(sdists[0]) as tar:
                top = tar.getnames()[0].split("/")[0] + "/" + inner
                members = [m for m in tar.getmembers() if m.name.startswith(top) and
                           (m.name[len(top):] == "convert_hf_to_gguf.py" or
                            m.name[len(top):].startswith(("gguf-py/", "conversion/")))]
                staging = Path(tmp) / "tree"
                tar.extractall(staging, members=members, filter="data")
            partial = tree.with_name(tree.name + ".partial")
            shutil.rmtree(partial, ignore_errors=True)
            shutil.move(str(staging / top), partial)
            partial.rename(tree)  # whole or absent: a cut-short unpacking is never taken for the tree
        return script

    def gguf(self, folder: Path) -> Path:
        """``folder``'s model written to GGUF (float32) by llama.cpp's converter, once."""
        out = folder / "model-f32.gguf"
        if not out.is_file():
            run = subprocess.run([sys.executable, str(self.converter()), str(folder), "--outtype", "f32",
                                  "--outfile", str(out)], capture_output=True, text=True)
            if run.returncode != 0:
                last = (run.stderr.strip().splitlines() or ["no output"])[-1]
                raise Unreadable(f"llama.cpp's converter refused the carrier model: {last[:200]}")
        return out

    def logits(self, folder: Path, tokens, positions, n_ctx: int = N_CTX) -> np.ndarray:
        """The logits of ``tokens`` at ``positions`` (one sequence, a fresh context of ``n_ctx`` cells, a float32 KV
        cache), as llama.cpp computes them."""
        import llama_cpp

        n = len(tokens)
        llm = llama_cpp.Llama(str(self.gguf(folder)), n_ctx=n_ctx, n_batch=n_ctx, n_ubatch=n_ctx, logits_all=True,
                              type_k=llama_cpp.GGML_TYPE_F32, type_v=llama_cpp.GGML_TYPE_F32, n_threads=1,
                              verbose=False)
        try:
            batch = llama_cpp.llama_batch_init(n, 0, 1)
            try:
                for i, (t, p) in enumerate(zip(tokens, positions)):
                    batch.token[i], batch.pos[i], batch.n_seq_id[i], batch.logits[i] = int(t), int(p), 1, True
                    batch.seq_id[i][0] = 0
                batch.n_tokens = n
                if llama_cpp.llama_decode(llm.ctx, batch) != 0:
                    raise Unreadable(f"llama.cpp refused a batch of {n} tokens at positions {positions[0]} ...")
                ptr = llama_cpp.llama_get_logits(llm.ctx)
                return np.ctypeslib.as_array(ptr, shape=(n, llm.n_vocab())).astype(np.float64)
            finally:
                llama_cpp.llama_batch_free(batch)
        finally:
            llm.close()

