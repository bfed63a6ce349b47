"""The process boundary: the implementation under test runs in processes ropespec owns.

* :mod:`.targets`: loading a TARGET (a file's or a module's attribute) and what it says of itself;
* :mod:`.host`: the worker's side, where the implementation is built and called and everything it returns is checked;
* :mod:`.client`: the parent's side of a host (:class:`~.client.HostClient`), and the in-process host for a callable
  no other process can load;
* :mod:`.processes`: ropespec's own child processes and the fork server that starts them;
* :mod:`.workers`: one implementation's worker, its deadlines, crashes and restarts, and how many live at once;
* :mod:`.worker` and :mod:`.zygote`: the worker and fork-server programs (``python -m``);
* :mod:`.messages`: the typed records that cross every boundary.
"""
