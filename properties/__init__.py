"""properties: the invariants as Hypothesis properties, one test file per spec section, run against
any plugged implementation (see :mod:`ropespec.properties.framework`)."""
