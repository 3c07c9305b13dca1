"""The lint stage: reads a design and its capacity report and produces findings (TW codes, each located at a
blueprint line), with the blueprint's `lint.ignore` applied."""
