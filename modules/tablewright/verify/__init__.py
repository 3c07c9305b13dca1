"""The verify stage: reads a `Stack` and produces verification results: each access pattern's plan run
against an embedded DynamoDB holding sample items, compared with an independent oracle."""
