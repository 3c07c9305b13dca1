"""The report stage: reads stacks, lint results, verification results and reviews, and produces what the
commands print: text, JSON, Markdown, SARIF and Mermaid diagrams."""
