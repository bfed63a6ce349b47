from ropespec.spec.families import Family


class Learned(Family):
    name = "learned"
    means = "a learned table of position embeddings, max_position rows"
    order = 20
