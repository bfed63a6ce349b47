"""Known-buggy variants of the tutorial's lab module (implementations/stdlib_lab.py), for the grader.
Each module's docstring says its fault; ``FAULT`` maps the function that is wrong to the diagnosis
the grader must name (None: the function is missing)."""
