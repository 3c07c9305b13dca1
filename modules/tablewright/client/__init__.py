"""`client`: reads a `Stack` and produces the data-access module of its design for application code, in
Python or TypeScript: entity types, key builders, writes and one read per access pattern."""
