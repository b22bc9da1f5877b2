# policy unit tests
