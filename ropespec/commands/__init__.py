"""The ``ropespec`` commands, one module each: ``NAME``, ``add(subparsers)``, which puts its request's options on its
parser (:mod:`ropespec.request`: one typed request per command, its fields the options), and ``run(request, console)
-> exit code``. A new command is one more module, listed here, and one more request; ``options`` and ``matrix``
(check's configuration matrix) are shared parts, no commands."""

from ropespec.commands import check, fingerprint, golden, invariants, lab, precision, presets, proofs, readings, spec

#: in the order ``ropespec --help`` lists them
COMMANDS = (check, golden, fingerprint, spec, proofs, invariants, presets, precision, lab, readings)

__all__ = ["COMMANDS"]
