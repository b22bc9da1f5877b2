# simulator golden tests
