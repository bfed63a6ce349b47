"""The tiny carrier model of a config.json, which the libraries of door "model" read: a random model carrying the
config's RoPE fields (its base, scaling dict, lengths and head_dim) in an architecture every converter takes with a
SentencePiece tokenizer: a Llama, or a Phi-3 for LongRoPE (the architecture whose converters read it). Its sizes are
the model family's tiny ones (:mod:`ropespec.implementations.adapters.hf_model`), float32, seed 0; transformers saves
it, so each library reads it through its own converter."""

from __future__ import annotations

import copy
from pathlib import Path

from ropespec.implementations.adapters import hf_model
from ropespec.implementations.libraries import Unreadable
from ropespec.spec.hfconfig import from_hf_config

#: the config's fields a carrier model keeps: its RoPE and its lengths
CARRIED = ("rope_theta", "rope_scaling", "rope_parameters", "max_position_embeddings",
           "original_max_position_embeddings", "partial_rotary_factor")


def _text(d: dict) -> dict:
    return d["text_config"] if isinstance(d.get("text_config"), dict) else d


def carrier(d: dict) -> dict:
    """The config of the tiny model that carries ``d``'s RoPE (Unreadable where no Llama or Phi-3 can carry it)."""
    text, e = _text(d), from_hf_config(d)
    out = {k: copy.deepcopy(text[k]) for k in CARRIED if k in text}
    phi3 = e.method.switches_at_length  # LongRoPE: Phi-3 is the architecture that reads it
    if e.rotary_dim != e.head_dim and not phi3:
        raise Unreadable(f"through a tiny Llama: partial rotary ({e.rotary_dim} of {e.head_dim} dims) has no Llama to "
                         f"carry it")
    if e.convention != "half":
        raise Unreadable(f"through a tiny Llama: the {e.convention} convention has no Llama to carry it")
    out.update(model_type="phi3" if phi3 else "llama", head_dim=e.head_dim,
               architectures=["Phi3ForCausalLM" if phi3 else "LlamaForCausalLM"])
    return out


def save_carrier(d: dict, folder: Path):
    """The tiny carrier model of ``d`` (float32, seed 0, sharpened as the model family's tiny models are), saved in
    ``folder`` with a SentencePiece tokenizer trained on the spot (converters read one; its tokens are never used:
    tokens go in as ids). Returns the model."""
    import sentencepiece
    import torch
    import transformers

    transformers.utils.logging.disable_progress_bar()  # its progress and advice on standard error are no reading
    transformers.logging.set_verbosity_error()
    c = carrier(d)
    e = from_hf_config(c)
    config = hf_model._config_from_file(c, c["model_type"], e, True)
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    model = hf_model._model_class(type(config))(config).to(torch.float32).eval()
    hf_model._sharpen(model)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder, safe_serialization=True)
    words = (f"w{i} x{i % 7} y{i % 13} abc def ghi jkl mno pqr stu vwx yz" for i in range(2000))
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=(w for line in words for w in line.split()), model_prefix=str(folder / "tokenizer"),
        vocab_size=config.vocab_size, model_type="bpe", pad_id=0, bos_id=1, eos_id=2, unk_id=3,
        hard_vocab_limit=False, minloglevel=2)
    return model
