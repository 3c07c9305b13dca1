"""What watches a table, as plain data derived from the design: the CloudWatch alarms (metric math over
the DynamoDB metrics, each filled where DynamoDB publishes nothing) and the change rule's EventBridge
pattern. `modules/constructs` turns both into Terraform; `modules/capacity` prices the alarms."""
