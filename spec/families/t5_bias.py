from ropespec.spec.families import Family


class T5Bias(Family):
    name = "t5-bias"
    means = "T5's relative-position buckets: bucket(relative_position, bidirectional, num_buckets, max_distance)"
    order = 60
    fields = ("dtype", "max_position")
    fingerprint = "ropespec.commands.fingerprint:t5"

    def rules(self, e) -> str:
        return "T5's buckets, judged exactly"
