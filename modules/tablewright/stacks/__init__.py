"""The stack value: reads loaded blueprints and produces one `Stack` each (design, capacity, cost and lint
findings, computed once); and the catalog (`list`, `new`) of a directory of blueprints."""
