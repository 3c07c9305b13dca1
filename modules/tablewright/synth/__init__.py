"""The synth stage: reads `Stack` values and produces the cdktf output directory (`cdktf.out`), replaced only
when it is Tablewright's own, and the design lock beside each blueprint."""
