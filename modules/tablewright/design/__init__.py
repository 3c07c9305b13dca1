"""The design stage: reads a `Blueprint` (and its design lock) and produces a `TableDesign`: key shapes per
index, the GSIs with their projections, and one query plan per access pattern."""
