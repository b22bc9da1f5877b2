# workload unit tests
