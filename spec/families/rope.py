from ropespec.spec.families import Family


class Rope(Family):
    name = "rope"
    means = "rotary position embedding: each pair of the rotary dims turned by p theta_i"
    order = 0
    described_by_presets = True
    fingerprint = "ropespec.commands.fingerprint:rope"
