"""The blueprint stage: reads blueprint YAML files (with `extends`, environments and the design lock) and
produces validated `Blueprint` models, each value located at its file and line (the language is in `language`)."""
