"""LoadRequest, the one record of what to load: its fields are load_implementation's arguments, it crosses a process
boundary whole, and every caller that loads (the shipped list, TARGETs, the matrix, the zoo) builds one."""

from __future__ import annotations

import inspect
import pickle
from dataclasses import fields

from ropespec.implementations import LoadRequest, load_implementation
from ropespec.implementations.zoo import members
from ropespec.inputs import load_requests
from ropespec.spec.expectation import Expect


def test_its_fields_are_load_implementation_s_arguments():
    params = set(inspect.signature(load_implementation).parameters)
    assert {f.name for f in fields(LoadRequest)} == params


def test_it_crosses_a_process_boundary_whole():
    r = LoadRequest("ropespec.implementations.numpy_rope:make", name="n", dtype="float32",
                    expect=Expect(head_dim=64), configuration={"expect": "x", "dtype": "float32", "layout": "nd"})
    assert pickle.loads(pickle.dumps(r)) == r


def test_every_loader_builds_one():
    shipped = load_requests(None)
    assert shipped and all(isinstance(r, LoadRequest) for r in shipped)
    [mine] = load_requests(["my_rope.py:apply"], dtype="bfloat16", array="torch")
    assert (mine.target, mine.name, mine.dtype, mine.array) == ("my_rope.py:apply", "my_rope.py:apply", "bfloat16", "torch")
    member = next(m for m in members() if m.expect is not None)
    request = member.request()
    assert request.name == member.name and request.expect == Expect.from_dict(member.expect)
    impl = member.impl()
    try:
        assert (impl.name, impl.dtype) == (request.name, request.expect.dtype)
    finally:
        impl.close()
