# model unit tests
