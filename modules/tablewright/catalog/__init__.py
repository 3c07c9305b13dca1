"""The catalog of a repository's blueprints (`tablewright list`) and the scaffold of a new service
blueprint (`tablewright new`)."""
