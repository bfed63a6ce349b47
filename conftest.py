"""Run control for this repository's own test run.

The options (--rope-impl, --rope-expect, --rope-array, --rope-dtype, --rope-max-position), the
impl parametrisation and the report header live in the ropespec pytest plugin
(ropespec/pytest_plugin.py), which pytest loads through its pytest11 entry point wherever ropespec
is installed: this repository and a user's test suite share one code path.
"""

import json
import os
from pathlib import Path

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """A plain ``pytest`` of the whole repository runs on one process more than the cores (3 on the project's
    2-core machines) when pytest-xdist is installed: a test process spends part of its time waiting for the worker
    process that runs the code under test, and a third one keeps both cores busy (the fast tier took 158.7 s on two
    processes and 144.6 s on three, 168.4 s on four). ``-n 0`` runs serially, and any explicit path or ``-n N`` is
    left alone."""
    opt = config.option
    if (getattr(opt, "numprocesses", "absent") is None and not config.args_source == config.ArgsSource.ARGS
            and not os.environ.get("PYTEST_XDIST_WORKER") and (os.cpu_count() or 1) > 1):
        opt.numprocesses = min(os.cpu_count(), 2) + 1
        if getattr(opt, "dist", "no") == "no":
            opt.dist = "load"


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("ropespec"):
        raise pytest.UsageError("the ropespec plugin is not loaded: install the project first (pip install -e .)")
    if os.environ.get("PYTEST_XDIST_WORKER"):  # a test process shares the cores with the others and their workers
        _share_the_cores()
    # this repository's own Hypothesis tests use ropespec's profile too (the plugin changes no one's settings)
    if not config.getoption("hypothesis_profile", None):
        from hypothesis import settings

        from ropespec.properties import profiles

        settings.load_profile(profiles.hypothesis_name(config.getoption("rope_profile", None) or profiles.active()))


#: the longest tests (README's `ropespec check` of every shipped implementation, the transformers runs): started
#: first, so that two workers do not end with one of them alone on a half-minute test
_FIRST = ("tests/test_readme.py::test_readme_command[ropespec check]",
          "tests/test_readme.py::test_readme_command[ropespec check ropespec.implementations.adapters.hf",
          "tests/test_examples.py::test_transformers_example", "tests/test_isolation.py::test_nasty_implementations",
          "tests/test_domain.py::test_no_property_hands_over", "tests/test_cli.py::test_zoo_member_fails_with",
          "tests/test_biases.py::test_a_lookup_is_told")


#: the slow tier, `pytest -m slow` (.ci/run runs it after the fast one, README's `pytest`): what starts real libraries,
#: a cluster, a browser or a terminal, Triton's interpreter, or whole runs of every shipped implementation. Every
#: invariant, family and form keeps its fast tests (tests/test_zoo.py, tests/test_domain.py, tests/test_grid.py).
SLOW = {
    "tests/test_real_multi_axis.py": "transformers' and diffusers' multi-axis code",
    "tests/test_hf.py": "transformers' rotary code",
    "tests/test_real_code.py": "transformers' rotary code, model type by model type",
    "tests/test_hf_models.py": "transformers' model types",
    "tests/test_triton.py": "Triton's interpreter",
    "tests/test_jax.py": "jax",
    "tests/test_cluster.py": "a local Ray cluster",
    "tests/test_browser.py": "headless Chromium",
    "tests/test_docs.py::test_in_chromium": "headless Chromium",
    "tests/test_terminal.py": "tmux",
    "tests/test_examples.py": "the examples with transformers, and the plugin in scratch projects",
    "tests/test_memory.py": "the peak memory of whole runs",
    "tests/test_wheel.py": "a wheel built and installed",
    "tests/test_isolation.py::test_nasty_implementations": "every way a target can end or hang, in one run",
    "tests/test_biases.py::test_rotary_embedding_torch": "rotary-embedding-torch",
    "tests/test_biases.py::test_t5_s_compute_bias": "transformers' T5",
    "tests/test_biases.py::test_transformers_builders": "transformers' ALiBi builders",
    "tests/test_biases.py::test_falcon": "transformers' Falcon",
    "tests/test_biases.py::test_bloom_s_and_mpt_s_alibi": "transformers' BLOOM and MPT",
    "tests/test_biases.py::test_bloom_in_bfloat16": "transformers' BLOOM (the zoo's alibi_bf16_positions is fast)",
    "tests/test_biases.py::test_bloom_s_batched_bias": "transformers' BLOOM",
    "tests/test_biases.py::test_the_adapters_decline": "transformers' ALiBi adapters",
    "tests/test_biases.py::test_the_alibi_fingerprint_reads_bloom": "transformers' BLOOM, MPT and Falcon",
    "tests/test_isolation.py::test_a_hung_torch_call": "torch",
    "tests/test_isolation.py::test_the_transformers_adapter_without": "transformers' adapter",
    # the process boundary where it waits out timeouts, signals and hangs (every way a target ends is in the slow
    # tier's test_nasty_implementations; the fast tier keeps the one-line errors and a hang that times out)
    "tests/test_memory_limit.py": "workers killed at their memory limit",
    "tests/test_hostile_targets.py::test_a_target_that_hangs_costs_three_timeouts": "a hang waited out three times",
    "tests/test_hostile_targets.py::test_a_call_cut_short_leaves_no_stale_reply": "a call cut short by its timeout",
    "tests/test_isolation.py::test_signal_stops_a_parallel_run": "signals to parallel runs",
    "tests/test_isolation.py::test_a_replayed_timeout_is_a_timeout": "a timeout replayed",
    "tests/test_isolation.py::test_jobs_are_capped": "parallel runs",
    "tests/test_isolation.py::test_fingerprint_and_precision_take_timeouts": "timeouts of the other commands",
    "tests/test_report_files.py::test_a_closed_stdout_keeps_the_reports": "a run whose stdout closes",
    "tests/test_report_files.py::test_an_interrupted_run_is_never_passed": "an interrupted run",
    "tests/test_report_files.py::test_a_terminated_hang_with_nothing_done": "a terminated hang",
    "tests/test_diagnoses.py::test_float32_frequencies_under_the_strict_class": "transformers' Llama rotary",
    "tests/test_forms.py::test_a_complex_form_function_is_checked_as_its_users_call_it": "Meta's and DeepSeek's torch code",
    # the batched layouts hand positions over alike (one axis order each): bshd's domain record is fast
    "tests/test_domain.py::test_no_property_hands_over_a_position_outside_the_domain[apply-bhsd]": "another axis order",
    "tests/test_domain.py::test_no_property_hands_over_a_position_outside_the_domain[apply-sbhd]": "another axis order",
    # positions per token and pinned axes are thd's and nd's with other positions: thd's and nd's records are fast
    "tests/test_domain.py::test_no_property_hands_over_a_position_outside_the_domain[apply-thd-per-token]":
        "another layout's positions",
    "tests/test_domain.py::test_no_property_hands_over_a_position_outside_the_domain[apply-nd-pinned-axes]":
        "another layout's positions",
    # the plugin in scratch projects beyond its --rope-impl run and its usage errors
    "tests/test_plugin.py::test_env_variable_and_expectation": "the plugin in a scratch project",
    "tests/test_plugin.py::test_rope_timeout_option_reaches_the_worker": "the plugin in a scratch project",
    "tests/test_plugin.py::test_an_unrelated_project_lists_nothing_under_test": "the plugin in a scratch project",
    # whole transformers models and a decoder of one's own from a scratch folder (the zoo's model members and the
    # numpy rebuilds of the published plumbing bugs are fast)
    "tests/test_model.py::test_a_published_bug_on_transformers": "tiny transformers models",
    "tests/test_model.py::test_transformers_models_built_tiny": "tiny transformers models",
    "tests/test_model.py::test_a_decoder_of_ones_own": "a decoder of one's own in a scratch folder",
    "tests/test_model.py::test_a_model_without_a_cache": "a torch model without a cache",
    "tests/test_model.py::test_a_config_json_builds": "tiny transformers models",
    "tests/test_model.py::test_a_config_json_target_is_checked": "a tiny transformers model",
    "tests/test_model.py::test_a_config_json_that_needs": "transformers' model types",
    "tests/test_model.py::test_a_model_type_transformers_lacks": "transformers' model types",
    "tests/test_model.py::test_a_model_type_without_sdpa": "transformers' Gemma 2",
    "tests/test_model.py::test_a_tiny_model_that_does_not_run": "transformers' Qwen2-VL",
    "tests/test_model.py::test_a_mixture_of_experts_runs": "transformers' Mixtral",
    # README's multi-axis examples beyond Qwen3-VL's (the zoo names every axes fault in the fast tier)
    "tests/test_multi_axis_examples.py::test_examples_pass_and_twins_fail_with_their_word[qwen2-vl-7b]": "an example",
    "tests/test_multi_axis_examples.py::test_examples_pass_and_twins_fail_with_their_word[flux.1-dev]": "an example",
    "tests/test_multi_axis_examples.py::test_examples_pass_and_twins_fail_with_their_word[ltx_video_48.json]": "an example",
}
#: README commands of the slow tier, by what they contain: real libraries, torch, clusters, every shipped
#: implementation (`ropespec check` alone) and pytest itself
SLOW_COMMANDS = ("--array torch", "adapters.hf", "adapters.diffusers", "adapters.liger", "adapters.rotary_xpos",
                 "transformers.models.", "triton_rotary", "jax_rope", "--cluster", "test_rope.py",
                 "examples/multi_axis.py:qwen2_vl", "examples/multi_axis.py:flux", "--family model")


#: the presets whose numpy factory is checked as a plain function in the fast tier (one of each kind: a scaled 1-D
#: model, MLA's rope_interleave, a chunked and an interleaved M-RoPE, per-axis ladders); the others in the slow tier
FAST_PRESETS = ("llama3.1-8b", "deepseek-v3", "qwen2-vl-7b", "qwen3-vl-8b", "flux.1-dev")


#: the tiers by time: a test of the fast tier that took SLOW_S seconds or more when tests/durations.json was recorded
#: (benchmarks/test_durations.py, on an idle 2-core machine) runs in the slow tier, so that README's `pytest` keeps
#: within its 150 s on such a machine; FAST_ALWAYS stays fast whatever it takes, the fast tier's coverage of every
#: invariant, family, form and word: each zoo member failing with its word (and every shipped implementation
#: holding), each form's domain record, each proof and its mutations (tests/test_tiers.py checks they are all collected)
SLOW_S = 1.0
FAST_ALWAYS = ("tests/test_zoo.py::", "tests/test_proofs.py::", "tests/test_domain.py::test_no_property_hands_over",
               "tests/test_domain.py::test_every_form_is_called", "tests/test_tiers.py::")
#: ROPESPEC_TIERS=all: the recorded times do not move anything (benchmarks/test_durations.py records with it)
_DURATIONS = Path(__file__).parent / "tests" / "durations.json"
RECORDED = ({} if os.environ.get("ROPESPEC_TIERS") == "all" or not _DURATIONS.exists()
            else json.loads(_DURATIONS.read_text())["seconds"])


def slow_by_time(nodeid: str) -> bool:
    return RECORDED.get(nodeid, 0.0) >= SLOW_S and not nodeid.startswith(FAST_ALWAYS)


def _slow(item) -> bool:
    nodeid = item.nodeid
    if nodeid.startswith(tuple(SLOW)) or slow_by_time(nodeid):
        return True
    callspec = getattr(item, "callspec", None)
    command = callspec.params.get("command") if callspec is not None else None
    if nodeid.startswith("tests/test_readme.py::test_readme_command") and isinstance(command, str):
        return command in ("ropespec check", "ropespec proofs") or command.startswith(("pytest", "pip ")) or any(
            s in command for s in SLOW_COMMANDS)  # (tests/test_proofs.py proves every entry in the fast tier)
    if nodeid.startswith("tests/test_plain_functions.py::test_numpy_factory_as_a_plain_function_passes"):
        return not any(f"[{p}-" in nodeid for p in FAST_PRESETS)
    return False


def pytest_ignore_collect(collection_path, config):
    """Under ``-m "not slow"`` (README's pytest), a test file that is slow as a whole is not imported at all: its
    libraries (transformers, diffusers, jax, ray) cost seconds of every worker's collection for tests it deselects."""
    if (config.getoption("markexpr", "") or "").replace(" ", "") != "notslow":
        return None
    root = Path(str(config.rootpath))
    try:
        rel = Path(str(collection_path)).resolve().relative_to(root).as_posix()
    except ValueError:
        return None
    return True if rel in SLOW and "::" not in rel else None


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _slow(item):
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: not item.nodeid.startswith(_FIRST))


@pytest.fixture(autouse=True)
def _signal_handlers_kept():
    """A test leaves SIGINT's and SIGTERM's handlers as it found them (a leaked SIG_IGN makes a later test's
    interrupt vanish): one that does not fails, naming them, and the handlers are put back."""
    import signal

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    after = {s: signal.getsignal(s) for s in before}
    changed = {s.name: (before[s], after[s]) for s in before if after[s] is not before[s]}
    for s, handler in before.items():
        signal.signal(s, handler)
    assert not changed, f"the test left signal handlers changed: {changed}"


def _share_the_cores() -> None:
    """This test process's own numerical libraries (the tests that run torch or numpy in-process) compute on the
    threads a worker of its is given (ropespec.implementations.boundary.threads): pools of one thread per core in each
    xdist process waited on each other on a 2-core machine."""
    from ropespec.implementations.boundary import threads

    n = str(threads.per_worker())
    for name in threads.POOLS:
        os.environ.setdefault(name, n)
    torch = __import__("sys").modules.get("torch")
    if torch is not None:
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
