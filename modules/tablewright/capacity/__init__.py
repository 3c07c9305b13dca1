"""The capacity stage: reads a `TableDesign` and the prices and produces a `CapacityReport` (read and write
units per pattern, entity and index, the traffic model every later stage reads, each target's load and
suggested bounds, the on-demand maxima) and its monthly cost."""
