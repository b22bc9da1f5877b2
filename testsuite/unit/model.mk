# (model types are covered by test_workload and test_policy)
