"""What watches a table, as plain data derived from the design: the CloudWatch alarms (metric math over
the DynamoDB metrics, each filled where DynamoDB publishes nothing), the maintenance window with its SSM
change calendar, and the change rule's EventBridge pattern. `modules/tablewright/constructs` turns them into
Terraform; `modules/tablewright/capacity` prices the alarms."""
