"""Meta's complex-form RoPE on a checkpoint that pairs halves: view_as_complex reads neighbouring dims as one pair,
where transformers' converted weights (permuted for rotate_half) put a pair's dims head_dim/2 apart."""

from ropespec.implementations.numpy_complex import make as make_complex

TARGETS = ("kernel.qk",)
DIAGNOSIS = "convention"
SOURCE = ("Meta's apply_rotary_emb (view_as_complex over neighbouring dims) run on q and k projected by weights that "
          "transformers' convert_llama_weights_to_hf permuted for rotate_half's pairing")
FORM = "complex"
EXPECT = {"head_dim": 64, "dtype": "float32", "n_heads": 4, "n_kv_heads": 2}


def make(expect):
    return make_complex(expect.replace(convention="interleaved"))
