"""No property above 1 GB peak memory: the heaviest ones (the learned table's, which once grew by 190 MB/s
to 18 GB under the thorough profile; the large-positions sweep to 2^31; a long dynamic decode) run in a
fresh process tree, and the largest resident set of any process in it (ropespec and its workers, from
getrusage(RUSAGE_CHILDREN) of a process that did nothing else) stays under 1 GB."""

import subprocess
import sys

import pytest

LIMIT_KB = 1 << 20  # 1 GB

RUNS = {
    "learned, thorough": ["ropespec.implementations.learned:make", "--family", "learned", "--dtype", "float64", "--profile",
                          "thorough", "--invariant", "learned.parameter-count", "--invariant", "learned.in-range"],
    "sweep to 2^31": ["ropespec.implementations.numpy_rope:make", "--expect", '{"rope_theta": 500000}', "--invariant",
                      "rope.conformance:large_positions"],
    "dynamic decode": ["ropespec.implementations.numpy_decode:make", "--dtype", "float32", "--invariant", "decode.consistency",
                       "--expect", '{"head_dim": 64, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0, '
                                   '"original_max_position_embeddings": 256}, "max_position": 512}'],
}


@pytest.mark.parametrize("name", list(RUNS))
def test_peak_memory_stays_under_1_gb(name):
    argv = [sys.executable, "-m", "ropespec", "check", *RUNS[name], "--seed", "1"]
    probe = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
             "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, timeout=600)
    code, peak_kb = (int(v) for v in out.stdout.split())
    assert code == 0, out.stderr
    assert peak_kb < LIMIT_KB, f"{name}: peak {peak_kb / 1024:.0f} MB"
    print(f"{name}: peak {peak_kb / 1024:.0f} MB")
