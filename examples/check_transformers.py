"""Check transformers' own Llama rotary code (LlamaRotaryEmbedding + apply_rotary_pos_emb) against the
llama3.1-8b preset, in float32 and bfloat16. Needs transformers (pip install -e '.[hf]')."""
import sys

from ropespec import check

try:
    import transformers  # noqa: F401
except ImportError:
    print("transformers is not installed: pip install -e '.[hf]'")
    sys.exit(0)

ok = True
for dtype in ("float32", "bfloat16"):
    result = check("ropespec.implementations.adapters.hf:make", "llama3.1-8b", array="torch", dtype=dtype, seed=0,
                   invariants=["rope.conformance", "scaling.attention-factor", "scaling.band-edges"])
    print(result.report())
    ok &= result.passed
sys.exit(0 if ok else 1)
