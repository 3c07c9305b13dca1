"""The capacity stage: reads a `TableDesign` and the prices and produces a `CapacityReport` (read and write
units per pattern, entity and index, suggested bounds) and its monthly cost."""
