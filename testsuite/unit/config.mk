# config unit tests
