from ropespec.spec.families import Family


class Sinusoidal(Family):
    name = "sinusoidal"
    means = "the additive sinusoidal encoding PE(p) of Vaswani et al."
    order = 10
